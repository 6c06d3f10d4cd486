#!/usr/bin/env bash
# The real datapath between two network namespaces: creates rdmalab-a
# and rdmalab-b joined by a veth pair (10.77.0.1/24 and 10.77.0.2/24,
# addresses that exist only inside them, MTU 1500), impairs both
# directions with tc netem (1% loss, 5% of packets reordered by a 100 us
# delay of the rest), and moves verified bytes with go-back-N, IRN and
# MP-RDMA from b to a. Then checks that an MTU the veth cannot carry is
# refused with a clear error. Removes the namespaces on exit.
#
# Needs root (ip netns). Where the kernel has no netem qdisc, the loss
# and reordering come from the endpoints' own impairment layer
# (--impair) instead, and the script says so. Exits 0 after printing
# "skipped" when namespaces cannot be made at all (not root).
#
# Usage: scripts/net_netns.sh [RDMALAB_BINARY] [BYTES]   (default:
# target/release/rdmalab, 16Mi)
set -euo pipefail
source "$(dirname "$0")/netns_pair.sh"
bin=$(realpath "${1:-target/release/rdmalab}")
bytes=${2:-16Mi}
a=rdmalab-a-$$
b=rdmalab-b-$$

if ! ip netns add "$a" 2>/dev/null; then
  echo "net_netns: skipped: cannot create network namespaces (needs root and iproute2)"
  exit 0
fi
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; }
trap cleanup EXIT
impair=()
netns_pair "$a" "$b" veth-rl 10.77.0
if netns_netem "$a" "$b" veth-rl; then
  echo "net_netns: tc netem on both veth ends: 1% loss, 5% of packets sent ahead of the 100 us delay"
else
  echo "net_netns: this kernel has no netem qdisc; using the endpoints' --impair loss=0.01,reorder=0.05 instead"
  impair=(--impair loss=0.01,reorder=0.05,reorder_us=100)
fi

run() { # transport verb
  ip netns exec "$a" "$bin" net serve --bind 10.77.0.1:4791 --once --rate-gbps 2 "${impair[@]}" >/dev/null &
  local server=$!
  sleep 0.3
  local out
  if ! out=$(ip netns exec "$b" "$bin" net run --to 10.77.0.1:4791 --transport "$1" --verb "$2" \
        --bytes "$bytes" --mtu 1024 --rate-gbps 2 "${impair[@]}" 2>&1); then
    echo "$out"; echo "net_netns: FAIL: $1 $2"; kill $server 2>/dev/null; exit 1
  fi
  wait $server
  echo "$out" | grep '^net transport='
}
run roce write
run irn write
run irn read
run mprdma write

# 4096 payload bytes do not fit a 1500-byte veth.
ip netns exec "$a" "$bin" net serve --bind 10.77.0.1:4791 --once >/dev/null 2>&1 &
server=$!
sleep 0.3
if err=$(ip netns exec "$b" "$bin" net run --to 10.77.0.1:4791 --transport irn --verb write \
      --bytes 1Mi --mtu 4096 2>&1); then
  echo "net_netns: FAIL: --mtu 4096 over a 1500-byte path was accepted"; exit 1
fi
kill $server 2>/dev/null || true
case "$err" in
  *"carries 1500"*) echo "net_netns: --mtu 4096 refused: ${err#error: }" ;;
  *) echo "net_netns: FAIL: unexpected error for --mtu 4096: $err"; exit 1 ;;
esac
echo "net_netns: ok"
