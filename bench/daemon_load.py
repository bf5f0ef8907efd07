#!/usr/bin/env python3
"""edgetapd under subscriber load, on test-pattern cameras (320x240, 30 fps, a 16x16 grid):
prints one JSON line of figures. Runs the daemon with --allow-root; needs prlimit for `emfile`.

usage: bench/daemon_load.py EDGETAPD idle N [MAX]   N subscribers that never read (publisher.max_subscribers
                                                     MAX, default 64) for 20 s, then they leave: RSS before,
                                                     at the peak and 5 s after they left
       bench/daemon_load.py EDGETAPD emfile NOFILE  the daemon's fd limit NOFILE and more subscribers than it
                                                     can accept: its CPU while accept() fails, a control
                                                     request then and after the subscribers leave
       bench/daemon_load.py EDGETAPD steady TRACKER 4 cameras (klt or edgetap), 5 reading subscribers, metrics
                                                     on, for 20 s: peak fds, threads and RSS
"""
import json, os, socket, subprocess, sys, tempfile, time, threading, resource

edgetapd, mode = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
d = tempfile.mkdtemp()

def cam(name, pattern, tracker="klt"):
    return (f"  - name: {name}\n    source: test:{pattern}?width=320&height=240&fps=30&speed=1\n"
            f"    tracker: {tracker}\n    queries: {{grid: [16, 16]}}\n")

def start(max_subs=64, nofile=None, tracker="klt", cameras=1):
    cfg = os.path.join(d, "e.yaml")
    pats = ["pinwheel", "ball", "snow", "smpte"]
    with open(cfg, "w") as f:
        f.write(f"publisher: {{socket: {d}/t.sock, max_subscribers: {max_subs}}}\ncontrol: {{socket: {d}/c.sock}}\n"
                "metrics: {listen: '127.0.0.1:19464'}\ncameras:\n"
                + "".join(cam(f"c{i}", pats[i], tracker) for i in range(cameras)))
    cmd = [edgetapd, "--config", cfg, "--allow-root", "--stats-every", "0"]
    if nofile:
        cmd = ["prlimit", f"--nofile={nofile}", *cmd]
    p = subprocess.Popen(cmd, stdout=open(os.path.join(d, "log"), "w"), stderr=subprocess.STDOUT)
    for _ in range(200):
        if os.path.exists(f"{d}/c.sock") and os.path.exists(f"{d}/t.sock"):
            break
        time.sleep(0.05)
    time.sleep(2)
    return p

def status(p, key):
    for line in open(f"/proc/{p.pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])

def rss(p): return status(p, "VmRSS") / 1024
def fds(p): return len(os.listdir(f"/proc/{p.pid}/fd"))
def cpu(p):
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

def control(cmd, timeout=5):
    t = time.monotonic()
    s = socket.socket(socket.AF_UNIX); s.settimeout(timeout)
    try:
        s.connect(f"{d}/c.sock"); s.sendall(json.dumps({"cmd": cmd}).encode() + b"\n")
        reply = s.makefile().readline()
        return time.monotonic() - t, json.loads(reply) if reply else None
    except OSError as e:
        return time.monotonic() - t, repr(e)
    finally:
        s.close()

def connect_many(n):
    socks, misses = [], 0
    while len(socks) < n and misses < 40:  # 2 s without a free backlog slot: the daemon stopped accepting
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(0.5)  # non-blocking: a full backlog fails at once (EAGAIN) instead of blocking
        try:
            s.connect(f"{d}/t.sock")
        except OSError:
            s.close(); misses += 1; last_error = sys.exc_info()[1]; time.sleep(0.05); continue
        socks.append(s)
    if misses:
        print(f"connect failed {misses} times, last: {last_error!r}", file=sys.stderr)
    return socks

if mode == "idle":
    n = int(args[0]); cap = int(args[1]) if len(args) > 1 else 64
    p = start(cap)
    before = rss(p)
    socks = connect_many(n)
    peak = 0
    for _ in range(20):
        time.sleep(1); peak = max(peak, rss(p))
    subs = control("stats")[1]["socket"]
    for s in socks: s.close()
    time.sleep(5)
    print(json.dumps({"subscribers_asked": n, "cap": cap, "socket": subs, "rss_before_mb": round(before, 1),
                      "rss_peak_mb": round(peak, 1), "rss_after_leave_mb": round(rss(p), 1),
                      "hwm_mb": round(status(p, "VmHWM") / 1024, 1)}))
elif mode == "emfile":
    nofile = int(args[0])
    p = start(10000, nofile=nofile)
    socks = connect_many(nofile + 50)   # more than the daemon can accept
    time.sleep(1)
    c0, t0 = cpu(p), time.monotonic()
    time.sleep(5)
    used = (cpu(p) - c0) / (time.monotonic() - t0)
    lat, reply = control("list")
    for s in socks: s.close()
    time.sleep(2)
    lat2, reply2 = control("list")
    print(json.dumps({"nofile": nofile, "connected": len(socks), "cpu_cores_while_emfile": round(used, 3),
                      "control_while_emfile_s": round(lat, 2), "control_reply": str(reply)[:80],
                      "control_after_s": round(lat2, 3), "ok_after": bool(reply2 and reply2.get("ok"))}))
    print(open(os.path.join(d, "log")).read()[-1500:])
elif mode == "steady":
    tracker = args[0]
    p = start(64, tracker=tracker, cameras=4)
    readers = connect_many(5)
    stop = False
    def drain(s):
        while not stop:
            try:
                if not s.recv(65536): break
            except OSError: break
    ts = [threading.Thread(target=drain, args=(s,), daemon=True) for s in readers]
    for t in ts: t.start()
    peak_fd = peak_thr = 0; peak_rss = 0
    for _ in range(20):
        time.sleep(1)
        peak_fd = max(peak_fd, fds(p)); peak_thr = max(peak_thr, status(p, "Threads")); peak_rss = max(peak_rss, rss(p))
    print(json.dumps({"tracker": tracker, "cameras": 4, "subscribers": 5, "fds": peak_fd, "threads": peak_thr,
                      "rss_mb": round(peak_rss, 1), "hwm_mb": round(status(p, "VmHWM") / 1024, 1),
                      "stats": control("stats")[1]["cameras"][0].get("fps")}))
    stop = True
p.terminate(); p.wait()
