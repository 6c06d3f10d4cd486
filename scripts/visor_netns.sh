#!/usr/bin/env bash
# RDMAvisor between two network namespaces, not over loopback: creates
# rdmavisor-a and rdmavisor-b joined by a veth pair (10.78.0.1/24 and
# 10.78.0.2/24, MTU 1500), impairs both directions with tc netem (1%
# loss, 5% of packets reordered by a 100 us delay of the rest), starts
# one rdmavisord in each (MTU 1024, paced at 2 Gb/s), then:
# - visor-echo: 3 clients of 4 connections, one per FLAGS send, write and
#   read, 20 rounds of 4 KB echoed through the daemons, every echo
#   checked byte for byte and every message's CRC at the server;
# - `rdmalab visor bench --peer` against `rdmalab visor sink`, SEND and
#   READ, counting what the sink received.
# Removes the namespaces and stops the daemons on exit.
#
# Needs root (ip netns). Where the kernel has no netem qdisc (this VM's
# has none), the daemons impair what they receive instead (`rdmavisord
# --impair`, the same loss and reordering), and the script says so.
# Exits 0 after printing "skipped" when namespaces cannot be made (not
# root).
#
# Usage: scripts/visor_netns.sh [BINARY_DIR] [SECONDS]   (default:
# target/release, 1)
set -euo pipefail
source "$(dirname "$0")/netns_pair.sh"
dir=$(realpath "${1:-target/release}")
seconds=${2:-1}
a=rdmavisor-a-$$
b=rdmavisor-b-$$
tmp=$(mktemp -d)

if ! ip netns add "$a" 2>/dev/null; then
  echo "visor_netns: skipped: cannot create network namespaces (needs root and iproute2)"
  exit 0
fi
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
netns_pair "$a" "$b" veth-rv 10.78.0
if netns_netem "$a" "$b" veth-rv; then
  echo "visor_netns: tc netem on both veth ends: 1% loss, 5% of packets sent ahead of the 100 us delay"
  impair=()
else
  echo "visor_netns: this kernel has no netem qdisc; using rdmavisord --impair loss=0.01,reorder=0.05 instead"
  impair=(--impair loss=0.01,reorder=0.05,reorder_us=100)
fi

daemon() { # namespace, address, socket
  ip netns exec "$1" "$dir/rdmavisord" --control "$3" --bind "$2:4800" --mtu 1024 \
    --rate-gbps 2 --rto-us 2000 "${impair[@]}" >"$3.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -S "$3" ] && return; sleep 0.05; done
  echo "visor_netns: FAIL: rdmavisord on $2 did not start: $(cat "$3.log")"; exit 1
}
daemon "$a" 10.78.0.1 "$tmp/a.sock"
daemon "$b" 10.78.0.2 "$tmp/b.sock"

ip netns exec "$b" "$dir/visor-echo" --daemon "$tmp/b.sock" serve --port 80 --expect 12 \
  >"$tmp/serve.out" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q listening "$tmp/serve.out" && break; sleep 0.05; done
clients=()
for verb in send write read; do
  ip netns exec "$a" "$dir/visor-echo" --daemon "$tmp/a.sock" --verb "$verb" client \
    --to 10.78.0.2:80 --connections 4 --messages 20 --bytes 4096 >"$tmp/client-$verb.out" 2>&1 &
  clients+=($!)
done
for verb in send write read; do
  if ! wait "${clients[0]}"; then
    echo "visor_netns: FAIL: visor-echo client ($verb): $(cat "$tmp/client-$verb.out")"; exit 1
  fi
  clients=("${clients[@]:1}")
  echo "visor_netns: $verb: $(tail -1 "$tmp/client-$verb.out")"
done
if ! wait $server; then
  echo "visor_netns: FAIL: visor-echo serve: $(cat "$tmp/serve.out")"; exit 1
fi
echo "visor_netns: $(tail -1 "$tmp/serve.out")"

ip netns exec "$b" "$dir/rdmalab" visor sink --daemon "$tmp/b.sock" --port 9 >/dev/null 2>&1 &
pids+=($!)
sleep 0.3
for verb in send read; do
  line=$(ip netns exec "$a" "$dir/rdmalab" visor bench --peer 10.78.0.2:9 --daemon "$tmp/a.sock" \
    --verb "$verb" --connections 8 --msg-bytes 16384 --seconds "$seconds")
  case "$line" in
    *"msgs_per_s=0 "*) echo "visor_netns: FAIL: nothing reached the sink: $line"; exit 1 ;;
  esac
  echo "visor_netns: bench --peer, $verb: $line"
done
echo "visor_netns: ok"
