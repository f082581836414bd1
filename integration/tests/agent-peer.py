#!/usr/bin/python3
# agent-peer.py SOCKET CASE [STATE-FILE [NSGUARD]]: a hostile or broken peer
# of `nsguard agent` (shim/lib/agent.c's wire format), for client-agent.sh.
# Prints one line: what the agent answered ("ack A status=N text=..."),
# "closed" when it closed without a word, or "refused: ERROR" when the
# connection itself failed.
#
# The agent serves only peers running its own binary: with NSGUARD, the
# process that connects execs it (`NSGUARD hook poststop`, waiting on its
# stdin) and a forked child speaks on the connection.  The agent must take
# the connection only after that exec (client-agent.sh keeps it busy meanwhile).
import os
import socket
import struct
import sys
import time

REQ = "=8sIIII"  # magic, stage, verbose, config_len, state_len (host order)
REPLY = "=8siI"  # magic, status, text_len
CREATE, POSTSTOP = 1, 2


def header(stage, state, magic=b"nsgreq1\0", state_len=None):
    n = len(state) if state_len is None else state_len
    return struct.pack(REQ, magic, stage, 0, 0, n)


def answer(s):
    s.settimeout(30)
    try:
        ack = s.recv(1)
    except (ConnectionResetError, socket.timeout) as e:
        return "closed (%s)" % type(e).__name__
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


def main():
    path, case = sys.argv[1], sys.argv[2]
    state = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else b"{}"
    nsguard = sys.argv[4] if len(sys.argv) > 4 else None
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
    if nsguard:
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
        talk(s, case, state)
        sys.stdout.flush()
        os.close(w)
        return
    talk(s, case, state)


def talk(s, case, state):
    try:
        send(s, case, state)
    except BrokenPipeError:
        pass
    if case == "no-go":
        # A hook that gave up on the ack: it leaves without its 'G'.
        s.settimeout(30)
        print("ack %s, left" % s.recv(1).decode(errors="replace"))
        s.close()
    elif case != "truncated":
        print(answer(s))


def send(s, case, state):
    me = os.pidfd_open(os.getpid())
    if case == "bad-magic":
        s.sendall(header(POSTSTOP, state, magic=b"nsgreq9\0") + state)
    elif case == "huge":
        s.sendall(header(POSTSTOP, state, state_len=(1 << 20) + 1))
    elif case == "bad-stage":
        s.sendall(header(7, state) + state)
    elif case == "two-fds":
        socket.send_fds(s, [header(CREATE, state) + state], [me, me])
    elif case == "no-pidfd":
        s.sendall(header(CREATE, state) + state)
    elif case == "pidfd-on-poststop":
        socket.send_fds(s, [header(POSTSTOP, state) + state], [me])
    elif case == "truncated":
        s.sendall(header(CREATE, state)[:10])
        s.close()
        print("sent 10 bytes, closed")
        # The connecting process must live until the agent takes the
        # connection (it checks the peer then): its stdin stays open a while.
        sys.stdout.flush()
        time.sleep(20)
    elif case == "slow":
        # Half a header, then nothing: the agent gives up after its bound.
        s.sendall(header(CREATE, state)[:12])
        time.sleep(4)
    elif case == "pidfd-mismatch":
        # A valid request whose pidfd names this process, not the state's pid.
        socket.send_fds(s, [header(CREATE, state) + state], [me])
    elif case in ("garbage-state", "no-go"):
        socket.send_fds(s, [header(CREATE, b"\xff{]") + b"\xff{]"], [me])
    else:
        sys.exit("unknown case " + case)


main()
