"""Inside the sandbox: a relay from a port on the sandbox's own loopback to the proxy's socket.

Run as a script by ourobot's own Python (`python -I -S relay.py SOCKET PORT`), with nothing but
the standard library. It listens on 127.0.0.1:PORT (the only network the sandbox has), then
detaches, so the command that follows finds the proxy there (`HTTP_PROXY`); each connection is
joined byte for byte to the Unix socket the harness bound into the sandbox, behind which the
filtering proxy decides what may be reached. It decides nothing itself.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()


def main(argv: list[str]) -> int:
    path, port = argv[1], int(argv[2])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if os.fork() != 0:
        return 0  # listening already: the command may start
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    _serve(listener, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
