#!/usr/bin/env bash
# The real datapath's speed over loopback beside iperf3 (TCP and UDP),
# measured in one run on this machine: the server on core 0, the client
# on core 1 (taskset), each a single thread. rdmalab moves BYTES (default
# 1G) as WRITEs of 4 KB packets with one QP and with 16 QPs, RoCEv2 with
# go-back-N, paced at RATE Gb/s (default 20); then, with LOSSY=1, 1%
# loss and 1% reordering injected at both ends, go-back-N, IRN and
# MP-RDMA move the same bytes, verified. iperf3 comes from Debian's
# packages when missing.
#
# Usage: scripts/net_bench.sh [RDMALAB_BINARY] [BYTES] [RATE]
#        LOSSY=1 scripts/net_bench.sh ...
set -euo pipefail
bin=$(realpath "${1:-target/release/rdmalab}")
bytes=${2:-1G}
rate=${3:-20}
port=47911

if ! command -v iperf3 >/dev/null; then
  sudo=$( [ "$(id -u)" = 0 ] || command -v sudo || true )
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq iperf3 >/dev/null
fi
pin() { if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }

echo "machine: $(nproc) cores, $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg)"
pin 0 iperf3 -s -p $port -1 >/dev/null 2>&1 & sleep 0.5
tcp=$(pin 1 iperf3 -c 127.0.0.1 -p $port -n "$bytes" -l 128K -J | python3 -c '
import json, sys
e = json.load(sys.stdin)["end"]
print("%.2f" % (e["sum_received"]["bits_per_second"] / 1e9))')
wait
echo "iperf3 TCP, 1 stream:            ${tcp} Gb/s"
pin 0 iperf3 -s -p $port -1 >/dev/null 2>&1 & sleep 0.5
udp=$(pin 1 iperf3 -c 127.0.0.1 -p $port -u -b 0 -l 4096 -n "$bytes" -J | python3 -c '
import json, sys
s = json.load(sys.stdin)["end"]["sum"]
print("%.2f (%.1f%% lost)" % (s["bits_per_second"] * (1 - s["lost_percent"] / 100) / 1e9, s["lost_percent"]))')
wait
echo "iperf3 UDP, 4 KB datagrams:      ${udp} Gb/s"

net() { # label, run options...
  pin 0 "$bin" net serve --bind 127.0.0.1:$port --once --rate-gbps "$rate" "${serve_extra[@]}" >/dev/null &
  local server=$!
  sleep 0.3
  local out
  out=$(pin 1 "$bin" net run --to 127.0.0.1:$port --verb write --bytes "$bytes" --rate-gbps "$rate" "${@:2}")
  wait $server
  printf "%-32s %s\n" "$1" "$(echo "$out" | grep '^net transport=')"
}
serve_extra=()
net "rdmalab roce, 1 QP:" --transport roce --qps 1
net "rdmalab roce, 16 QPs:" --transport roce --qps 16
net "rdmalab irn, 1 QP:" --transport irn --qps 1
net "rdmalab irn, 16 QPs:" --transport irn --qps 16
if [ "${LOSSY:-0}" = 1 ]; then
  serve_extra=(--impair loss=0.01,reorder=0.01,reorder_us=100,seed=1)
  for t in roce irn mprdma; do
    net "rdmalab $t, 1% loss+reorder:" --transport $t --impair loss=0.01,reorder=0.01,reorder_us=100,seed=2
  done
fi
