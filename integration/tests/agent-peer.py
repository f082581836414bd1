#!/usr/bin/python3
# agent-peer.py SOCKET CASE [STATE-FILE [NSGUARD [NSG-PIDAT]]]: a hostile or
# broken peer of `nsguard agent` (shim/lib/agent.c's wire format, version
# 2), for client-agent.sh and client-agent-peer.sh.  Prints one line: what
# the agent answered ("ack A status=N text=...", "ack N"), "closed" when it
# closed without a word ("closed (timeout)" is this peer giving up, never the
# agent's doing), or "refused: ERROR" when the connection itself failed.
#
# The agent serves only the process that connected, wrote every byte of the
# request and sent a pidfd of itself, running its own binary: with NSGUARD,
# the connecting process writes the request, then execs it (`NSGUARD hook
# poststop`, waiting on its stdin) and a forked child reads the answer (or,
# in case writer-child, writes the request itself).  The agent must take the
# connection only after that exec (the callers keep it busy meanwhile).
#
# Case reuse (client-agent-peer.sh; AGENT_PID names the agent, stopped with
# SIGSTOP): two peers connect, each hands its socket to a child and exits;
# a real hook (NSGUARD hook poststop) gets each one's pid (NSG-PIDAT), then
# the child of the first writes a request with a pidfd of that hook as its
# own (reuse-child), the second peer had written its own before it exited
# (reuse-self).  The agent is continued; one line per peer:
# "VARIANT PID HOOK-PID: ANSWER".
import os
import signal
import socket
import struct
import subprocess
import sys
import time

REQ = "=8sIIII"  # magic, stage, verbose, config_len, state_len (host order)
REPLY = "=8siI"  # magic, status, text_len
MAGIC = b"nsgreq2\0"
CREATE, POSTSTOP = 1, 2


def header(stage, state, magic=MAGIC, state_len=None):
    n = len(state) if state_len is None else state_len
    return struct.pack(REQ, magic, stage, 0, 0, n)


def answer(s):
    s.settimeout(30)
    try:
        ack = s.recv(1)
    except ConnectionResetError as e:
        return "closed (%s)" % type(e).__name__
    except socket.timeout:
        return "closed (timeout)"
    if not ack:
        return "closed"
    if ack != b"A":
        return "ack " + ack.decode(errors="replace")
    s.sendall(b"G")  # waits for the verdict: the agent serves only now
    buf = b""
    while len(buf) < struct.calcsize(REPLY):
        more = s.recv(64)
        if not more:
            return "ack A, then closed"
        buf += more
    _, status, n = struct.unpack(REPLY, buf[:16])
    text = buf[16:]
    while len(text) < n:
        more = s.recv(n - len(text))
        if not more:
            break
        text += more
    return "ack A status=%d text=%s" % (status, text.decode(errors="replace").replace("\n", "|"))


def send(s, case, state):
    """What the connecting process writes (nothing for writer-child)."""
    me = os.pidfd_open(os.getpid())
    if case == "poststop":
        socket.send_fds(s, [header(POSTSTOP, state) + state], [me])
    elif case == "bad-magic":
        socket.send_fds(s, [header(POSTSTOP, state, magic=b"xsgreq2\0") + state], [me])
    elif case == "old-wire":
        # Version 1 (an older hook binary): no pidfd of itself.
        s.sendall(header(POSTSTOP, state, magic=b"nsgreq1\0") + state)
    elif case == "huge":
        socket.send_fds(s, [header(POSTSTOP, state, state_len=(1 << 20) + 1)], [me])
    elif case == "bad-stage":
        socket.send_fds(s, [header(7, state) + state], [me])
    elif case == "two-fds":
        # A poststop carries the hook's pidfd only.
        socket.send_fds(s, [header(POSTSTOP, state) + state], [me, me])
    elif case == "three-fds":
        socket.send_fds(s, [header(CREATE, state) + state], [me, me, me])
    elif case == "no-pidfd":
        s.sendall(header(POSTSTOP, state) + state)
    elif case == "no-init-pidfd":
        socket.send_fds(s, [header(CREATE, state) + state], [me])
    elif case == "truncated":
        socket.send_fds(s, [header(CREATE, state)[:10]], [me])
    elif case == "slow":
        # Half a header, then nothing: the agent gives up after its bound.
        socket.send_fds(s, [header(CREATE, state)[:12]], [me])
    elif case == "pidfd-mismatch":
        # A valid request whose init pidfd names this process, not the state's pid.
        socket.send_fds(s, [header(CREATE, state) + state], [me, me])
    elif case in ("garbage-state", "no-go"):
        socket.send_fds(s, [header(CREATE, b"\xff{]") + b"\xff{]"], [me, me])
    elif case == "self-pidfd-other":
        # A pidfd of another live process (init) as its own.
        socket.send_fds(s, [header(POSTSTOP, state) + state], [os.pidfd_open(1)])
    elif case != "writer-child":
        sys.exit("unknown case " + case)


def after(s, case, state, peer):
    """What the process that reads the answer does, and prints."""
    if case == "writer-child":
        # The peer's request, written by its child with a pidfd of the peer.
        socket.send_fds(s, [header(POSTSTOP, state) + state], [os.pidfd_open(peer)])
    if case == "truncated":
        s.close()
        print("sent 10 bytes, closed")
    elif case == "no-go":
        # A hook that gave up on the ack: it leaves without its 'G'.
        s.settimeout(30)
        print("ack %s, left" % s.recv(1).decode(errors="replace"))
        s.close()
    else:
        if case == "slow":
            time.sleep(4)
        print(answer(s))


def reuse(path, state, nsguard, pidat):
    agent = int(os.environ["AGENT_PID"])
    pid_max = "/proc/sys/kernel/pid_max"
    saved = open(pid_max).read().strip()
    peers, hooks, h = [], [], None
    try:
        # Pids from 300 (where the kernel starts again after pid_max) to 500
        # while the peers live and their pids come round: a few hundred
        # forks, not pid_max's thousands, each some ms under TCG.
        last = int(open("/proc/loadavg").read().split()[-1])
        with open(pid_max, "w") as f:
            f.write("500")
        if last < 300:
            subprocess.run([pidat, "300", "/bin/true"], stdout=subprocess.DEVNULL)
        for variant in ("reuse-child", "reuse-self"):
            go_r, go_w = os.pipe()
            out_r, out_w = os.pipe()
            o = os.fork()
            if o == 0:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                if variant == "reuse-self":
                    # Its own request and pidfd: the pidfd dies with it.
                    me = os.pidfd_open(os.getpid())
                    socket.send_fds(s, [header(POSTSTOP, state) + state], [me])
                peer = os.getpid()  # not getppid() in the child: this one may be gone
                if os.fork() == 0:
                    os.read(go_r, 1)
                    if variant == "reuse-child":
                        # The peer's pid is the hook's now: a pidfd of it, as if its own.
                        socket.send_fds(s, [header(POSTSTOP, state) + state], [os.pidfd_open(peer)])
                    os.write(out_w, b"s")
                    os.write(out_w, answer(s).encode())
                    os._exit(0)
                os._exit(0)
            os.waitpid(o, 0)  # reaped: its pid is free
            os.close(go_r)
            os.close(out_w)
            peers.append((variant, o, go_w, out_r))
        # One nsg-pidat for both: another process could take the second pid.
        h = subprocess.Popen([pidat, ",".join(str(p) for _, p, _, _ in peers), nsguard, "hook",
                              "poststop"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        for _ in peers:
            got = h.stdout.readline().decode().split()
            if len(got) == 2:
                hooks.append(int(got[1]))
    finally:
        with open(pid_max, "w") as f:
            f.write(saved)
    for _, _, go_w, out_r in peers:
        os.write(go_w, b"g")
        os.read(out_r, 1)  # its request is written
    os.kill(agent, signal.SIGCONT)
    for variant, p, _, out_r in peers:
        text = b""
        while True:
            more = os.read(out_r, 4096)
            if not more:
                break
            text += more
        print("%s %d %s: %s" % (variant, p, p if p in hooks else "none", text.decode()))
    # Killed, not ended: a hook that read a state would ask the agent itself.
    for p in hooks:
        os.kill(p, signal.SIGKILL)
    h.wait()


def main():
    path, case = sys.argv[1], sys.argv[2]
    state = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else b"{}"
    nsguard = sys.argv[4] if len(sys.argv) > 4 else None
    if case == "reuse":
        reuse(path, state, nsguard, sys.argv[5])
        return
    # Python starts slowly under TCG: started early, the peer says it is
    # ready and connects only when told to.
    ready, go = os.environ.get("AGENT_PEER_READY"), os.environ.get("AGENT_PEER_GO")
    if ready and go:
        open(ready, "w").close()
        while not os.path.exists(go):
            time.sleep(0.05)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        print("refused: " + e.strerror)
        return
    try:
        send(s, case, state)
    except BrokenPipeError:
        pass
    if not nsguard:
        after(s, case, state, os.getpid())
        return
    peer = os.getpid()
    r, w = os.pipe()
    if os.fork() != 0:
        # The connecting process becomes nsguard until the child is done.
        os.close(w)
        s.close()
        os.dup2(r, 0)
        null = os.open("/dev/null", os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(nsguard, [nsguard, "hook", "poststop"])
    os.close(r)
    after(s, case, state, peer)
    sys.stdout.flush()
    os.close(w)


main()
