#!/usr/bin/python3
# fake-agent.py SOCKET [UID]: a listener at the agent's path that is not nsguard's
# agent (client-agent-peer.sh): it answers every request as served with exit
# status 0 and no text, which a hook that trusted it would take for a guard
# attached; with UID, it listens as that uid (listen() takes the
# credentials a connecting peer sees).  Prints "listening" once it listens and "answered" per request
# it answered; runs until killed.
import os
import socket
import struct
import sys

REQ = "=8sIIII"  # magic, stage, verbose, config_len, state_len (host order)
REPLY = "=8siI"  # magic, status, text_len


def recv_exact(c, n):
    b = b""
    while len(b) < n:
        part = c.recv(n - len(b))
        if not part:
            raise EOFError
        b += part
    return b


def serve(c):
    msg, anc, _, _ = c.recvmsg(struct.calcsize(REQ), socket.CMSG_SPACE(8 * 4))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            for i in range(0, len(data) - len(data) % 4, 4):
                os.close(int.from_bytes(data[i:i + 4], sys.byteorder))
    msg += recv_exact(c, struct.calcsize(REQ) - len(msg))
    _, _, _, config_len, state_len = struct.unpack(REQ, msg)
    recv_exact(c, config_len + state_len)
    c.sendall(b"A")
    if recv_exact(c, 1) != b"G":
        return
    c.sendall(struct.pack(REPLY, b"nsgrep2\0", 0, 0))
    print("answered", flush=True)


def main():
    path = sys.argv[1]
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    if len(sys.argv) > 2:
        os.setresgid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
        os.setresuid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
    s.listen(8)
    print("listening", flush=True)
    while True:
        c, _ = s.accept()
        try:
            serve(c)
        except (EOFError, OSError):
            pass
        c.close()


main()
