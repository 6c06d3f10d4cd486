//! A slab: values in a `Vec` by index, freed indices reused first, so the
//! daemon's tables stay as large as their peak and no larger under churn.
//!
//! Plain data.

pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, v: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.items[i] = Some(v);
                i
            }
            None => {
                self.items.push(Some(v));
                self.items.len() - 1
            }
        }
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i)?.as_ref()
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i)?.as_mut()
    }

    pub fn remove(&mut self, i: usize) -> Option<T> {
        let v = self.items.get_mut(i)?.take()?;
        self.free.push(i);
        Some(v)
    }

    /// Replaces `out` with the indices in use, in order (the caller
    /// keeps `out`, so walking the table each turn allocates nothing).
    pub fn keys_into(&self, out: &mut Vec<usize>) {
        out.clear();
        out.extend((0..self.items.len()).filter(|&i| self.items[i].is_some()));
    }

    /// The indices in use and their values, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i, v.as_ref()?)))
    }

    /// The values in use, in index order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.items.iter().flatten()
    }

    pub fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots allocated (in use or free): what the table costs.
    pub fn capacity(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn freed_indices_are_reused() {
        let mut s = super::Slab::default();
        let a = s.insert(1);
        let b = s.insert(2);
        assert_eq!(s.remove(a), Some(1));
        assert_eq!(s.remove(a), None);
        assert_eq!(s.insert(3), a);
        assert_eq!(s.get(b), Some(&2));
        let mut keys = vec![9];
        s.keys_into(&mut keys);
        assert_eq!((s.len(), s.capacity(), keys), (2, 2, vec![0, 1]));
        s.remove(a);
        assert_eq!(s.iter().collect::<Vec<_>>(), [(b, &2)]);
    }
}
