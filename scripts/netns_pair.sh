# Sourced by net_netns.sh and visor_netns.sh.
#
# `netns_pair A B IF NET`: joins the namespaces A (already made) and B
# (made here) by a veth pair IF-a / IF-b, NET.1/24 in A and NET.2/24 in
# B, MTU 1500, loopback up in both.
netns_pair() {
  local a=$1 b=$2 ifc=$3 net=$4
  ip netns add "$b"
  ip link add "$ifc-a" netns "$a" type veth peer name "$ifc-b" netns "$b"
  ip -n "$a" addr add "$net.1/24" dev "$ifc-a"
  ip -n "$b" addr add "$net.2/24" dev "$ifc-b"
  for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
  ip -n "$a" link set "$ifc-a" mtu 1500 up
  ip -n "$b" link set "$ifc-b" mtu 1500 up
}

# `netns_netem A B IF`: impairs both directions of that pair with tc
# netem (1% loss, 5% of packets sent ahead of a 100 us delay of the
# rest); fails where the kernel has no netem qdisc.
netns_netem() {
  ip netns exec "$1" tc qdisc add dev "$3-a" root netem loss 1% delay 100us reorder 95% 2>/dev/null \
    && ip netns exec "$2" tc qdisc add dev "$3-b" root netem loss 1% delay 100us reorder 95%
}
