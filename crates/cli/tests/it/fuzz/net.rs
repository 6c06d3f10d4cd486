//! `rdmalab net serve`'s control protocol, fed mutated hellos: each on a
//! connection of its own, a valid hello (JSON, a line) with a few values
//! replaced by values of any type, keys dropped, arrays grown to 100,000
//! entries, or the text cut short. Every whole line must be answered
//! with an error saying why or a ready message (then the connection is
//! dropped, ending the session); and afterwards a legitimate transfer
//! must complete against the same server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use datapath::session::Msg;

use super::mutate::{budget, Mutator};
use crate::net::{net_run, serve};

/// A valid hello: what the mutations start from.
const HELLO: &str = r#"{"msg":"hello","version":1,"job":{"transport":"irn","verb":"write","cc":"none","bytes":65536,"msg_bytes":4096,"qps":2,"mtu":1024,"paths":1,"rto_us":1000,"seed":1,"seeded_psns":true},"udp_port":40000,"psns":[1,2]}"#;

/// Sends `input` as one hello and reads the answer: the answer line, or
/// "" when the server closed the connection without one; Err when none
/// came within 10 s.
fn exchange(addr: &str, input: &[u8], newline: bool) -> Result<String, String> {
    let mut s = TcpStream::connect(addr).expect("the server accepts");
    // Bounded: the server's own control deadline (500 ms) is far below.
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(input);
    if newline {
        let _ = s.write_all(b"\n");
    } else {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let mut line = String::new();
    match BufReader::new(&s).read_line(&mut line) {
        Ok(_) => Ok(line),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(String::new()),
        Err(e) => Err(format!("no answer to a hello within 10 s: {e}")),
    }
}

#[test]
fn mutated_hellos_are_answered_and_the_server_keeps_serving() {
    let b = budget(30);
    let template: serde_json::Value = serde_json::from_str(HELLO).unwrap();
    assert!(
        matches!(
            serde_json::from_value(template.clone()),
            Ok(Msg::Hello { .. })
        ),
        "the template is a valid hello"
    );
    let (mut server, addr) = serve(&["--control-timeout-ms", "500", "--idle-timeout-ms", "300"]);
    // The server logs a line per connection: read it as it comes, or a
    // full pipe would stop the server in its next write.
    let mut stderr = server.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut log = String::new();
        let _ = stderr.read_to_string(&mut log);
        log
    });
    let mut log = Some(log);
    let (mut refused, mut ready) = (0u64, 0u64);
    for i in b.iterations.clone() {
        let mut m = Mutator::new(b.seed, i);
        let input = m.json(&template);
        let newline = m.below(8) != 0;
        if b.show {
            eprintln!("iteration {i}: {}", String::from_utf8_lossy(&input));
        }
        // A session a ready hello started ends when its connection is
        // dropped; until the server sees that, it answers "busy".
        let mut ask = || {
            exchange(&addr, &input, newline).unwrap_or_else(|e| {
                let _ = server.kill();
                let log = log.take().map(|l| l.join().unwrap()).unwrap_or_default();
                panic!(
                    "seed {} iteration {i}: {e}: {}\nthe server's log:\n{log}",
                    b.seed,
                    String::from_utf8_lossy(&input)
                )
            })
        };
        let mut answer = ask();
        for _ in 0..200 {
            if !answer.contains("busy") {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            answer = ask();
        }
        match serde_json::from_str::<Msg>(&answer) {
            Ok(Msg::Ready { .. }) => ready += 1,
            Ok(Msg::Error { message }) => {
                assert!(!message.contains("busy"), "iteration {i}: still busy");
                refused += 1
            }
            Ok(other) => panic!("iteration {i}: answered {other:?}"),
            // Only a hello never finished (no line's end before the
            // connection's) goes unanswered: it is no session.
            Err(_) => assert!(
                answer.is_empty() && !newline,
                "iteration {i}: {answer:?} answers {}",
                String::from_utf8_lossy(&input)
            ),
        }
        assert!(
            server.try_wait().unwrap().is_none(),
            "seed {} iteration {i}: the server exited on {}",
            b.seed,
            String::from_utf8_lossy(&input)
        );
    }
    let o = net_run(&addr, "write", "256Ki", "irn", &[]);
    assert!(
        o.status.success(),
        "after the fuzzing a transfer failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = server.kill();
    eprintln!(
        "fuzz net: {} hellos (seed {}): {refused} refused, {ready} ready, the rest closed",
        b.iterations.end - b.iterations.start,
        b.seed
    );
}
