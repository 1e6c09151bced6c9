#!/bin/sh
# Where an idle connection's bytes are: runs bench/idle_memory.py against the
# release gateway with a preloaded allocation counter, and prints the live heap
# allocations the N connections added, by size (bench/memory.md, issue 16).
#   sh bench/memprof/profile.sh events 10000            # sizes
#   TRACE_SIZES=1016,328 sh bench/memprof/profile.sh events 2000   # + backtraces in /tmp/memprof/bt.txt
#   TASKS=1 sh bench/memprof/profile.sh events 200     # task-allocator stacks in /tmp/memprof/tasks.txt
set -e
kind=${1:-events}; count=${2:-10000}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
mkdir -p /tmp/memprof
gcc -O2 -shared -fPIC -o /tmp/memprof/live_by_size.so "$here/live_by_size.c" -lpthread
gcc -O2 -shared -fPIC -o /tmp/memprof/task_alloc.so "$here/task_alloc.c" -ldl -lpthread
lib=/tmp/memprof/live_by_size.so; [ -n "$TASKS" ] && lib=/tmp/memprof/task_alloc.so
printf '#!/bin/sh\nLD_PRELOAD=%s TRACE_SIZES=%s exec %s "$@"\n' "$lib" "$TRACE_SIZES" "$root/.build/release/sse-gateway" > /tmp/memprof/gateway.sh
chmod +x /tmp/memprof/gateway.sh
python3 - "$root/bench/idle_memory.py" <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace("        before = rss_kib(proc.pid)\n",
              "        before = rss_kib(proc.pid)\n        open('/tmp/memprof/dump0','w').close(); time.sleep(0.6)\n")
s = s.replace("        after = rss_kib(proc.pid)\n",
              "        after = rss_kib(proc.pid)\n        open('/tmp/memprof/dump1','w').close(); open('/tmp/memprof/tdump','w').close(); time.sleep(2)\n")
open('/tmp/memprof/idle_memory.py', 'w').write(s)
PY
cd "$root" && python3 /tmp/memprof/idle_memory.py --kind "$kind" --count "$count" --binary /tmp/memprof/gateway.sh
[ -n "$TASKS" ] && exit 0
python3 - "$count" <<'PY'
import sys
n = int(sys.argv[1])
def load(path):
    sizes, total = {}, 0
    for line in open(path):
        w = line.split()
        if w[0] == "size": sizes[int(w[1])] = int(w[3])
        else: total = int(w[1])
    return sizes, total
(b, tb), (a, ta) = load("/tmp/memprof/before.txt"), load("/tmp/memprof/after.txt")
print(f"live heap added per connection: {(ta - tb) / n:.0f} B")
rows = sorted(((a.get(s, 0) - b.get(s, 0)) * s, s, a.get(s, 0) - b.get(s, 0)) for s in set(a) | set(b))
for total, size, delta in reversed(rows):
    if abs(delta) >= n // 20:
        print(f"  usable size {size:6d}: {delta / n:5.2f} per connection, {total / n:7.1f} B")
PY
