"""A trainee of the training room, driven through JupyterHub's REST API (tests/test_room.py).

:class:`Trainee` logs in with the login form (as a browser does), takes an API token from its own
session, starts its server, and runs a chapter cell by cell in a kernel of that server over the
kernel's websocket: the same requests JupyterLab's Run All makes, without the browser.
:func:`memory_by_account` sums resident memory per account and role (server, kernel).
"""
from __future__ import annotations

import json
import time
import uuid

import jupytext
import psutil
import requests
import websocket


class RoomFailure(AssertionError):
    pass


class Trainee:
    def __init__(self, base: str, name: str, password: str):
        self.base, self.name, self.password = base.rstrip("/"), name, password
        self.http = requests.Session()
        self.token = None

    # --- the hub ---
    def login(self) -> None:
        r = self.http.get(f"{self.base}/hub/login", timeout=30)
        r.raise_for_status()
        xsrf = self.http.cookies.get("_xsrf", "")
        r = self.http.post(f"{self.base}/hub/login?next=", data={"username": self.name, "password": self.password,
                                                                 "_xsrf": xsrf}, allow_redirects=False, timeout=60)
        if r.status_code != 302:
            raise RoomFailure(f"{self.name}: login answered {r.status_code}, not a redirect")
        r = self.http.post(f"{self.base}/hub/api/users/{self.name}/tokens", json={"note": "room test",
                           "expires_in": 7200}, headers={"X-XSRFToken": self.http.cookies.get("_xsrf", "")},
                           timeout=30)
        if r.status_code != 201:
            raise RoomFailure(f"{self.name}: token request answered {r.status_code}: {r.text[:200]}")
        self.token = r.json()["token"]

    def api(self, method: str, path: str, **kw) -> requests.Response:
        headers = {"Authorization": f"token {self.token}", **kw.pop("headers", {})}
        return requests.request(method, f"{self.base}{path}", headers=headers, timeout=kw.pop("timeout", 60), **kw)

    def start_server(self, timeout: float = 180) -> float:
        t0 = time.monotonic()
        r = self.api("POST", f"/hub/api/users/{self.name}/server")
        if r.status_code not in (201, 202, 400):      # 400: already running
            raise RoomFailure(f"{self.name}: starting the server answered {r.status_code}: {r.text[:200]}")
        while time.monotonic() - t0 < timeout:
            server = self.api("GET", f"/hub/api/users/{self.name}").json().get("servers", {}).get("", {})
            if server.get("ready"):
                return time.monotonic() - t0
            time.sleep(1)
        raise RoomFailure(f"{self.name}: server not ready within {timeout:.0f}s")

    def stop_server(self) -> None:
        self.api("DELETE", f"/hub/api/users/{self.name}/server")

    # --- the trainee's own server ---
    def user_path(self, owner: str | None = None) -> str:
        return f"/user/{owner or self.name}"

    def open_session(self, path: str) -> str:
        r = self.api("POST", f"{self.user_path()}/api/sessions",
                     json={"path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1],
                           "kernel": {"name": "python3"}})
        if r.status_code != 201:
            raise RoomFailure(f"{self.name}: opening {path} answered {r.status_code}: {r.text[:200]}")
        return r.json()["kernel"]["id"]

    def run_cells(self, kernel_id: str, sources: list[str], timeout: float) -> list[str]:
        """Execute ``sources`` in order; return the problems (errors, stderr), stop at the first error."""
        url = self.base.replace("http", "ws", 1) + f"{self.user_path()}/api/kernels/{kernel_id}/channels"
        ws = websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=timeout)
        problems: list[str] = []
        end = time.monotonic() + timeout
        try:
            for i, src in enumerate(sources):
                msg_id = uuid.uuid4().hex
                ws.send(json.dumps({"header": {"msg_id": msg_id, "username": self.name, "session": uuid.uuid4().hex,
                                               "msg_type": "execute_request", "version": "5.3"},
                                    "parent_header": {}, "metadata": {}, "channel": "shell",
                                    "content": {"code": src, "silent": False, "store_history": True,
                                                "user_expressions": {}, "allow_stdin": False,
                                                "stop_on_error": True}}))
                replied = idle = False  # as in run_code: the reply may overtake the cell's output
                while not (replied and idle):
                    ws.settimeout(max(1, end - time.monotonic()))
                    msg = json.loads(ws.recv())
                    if msg.get("parent_header", {}).get("msg_id") != msg_id:
                        continue
                    kind = msg["header"]["msg_type"]
                    if kind == "stream" and msg["content"]["name"] == "stderr":
                        problems.append(f"cell {i}: stderr: {msg['content']['text'][:300]}")
                    elif kind == "error":
                        problems.append(f"cell {i}: {msg['content']['ename']}: {msg['content']['evalue'][:300]}")
                    elif kind == "execute_reply" and msg["channel"] == "shell":
                        replied = True
                    elif kind == "status" and msg["content"].get("execution_state") == "idle":
                        idle = True
                if any(p.startswith(f"cell {i}: ") and "stderr" not in p for p in problems):
                    break
        finally:
            ws.close()
        return problems

    def run_code(self, kernel_id: str, code: str, timeout: float = 60) -> str:
        """Run one snippet; return what it printed (stdout) and its error, if any, as text."""
        url = self.base.replace("http", "ws", 1) + f"{self.user_path()}/api/kernels/{kernel_id}/channels"
        ws = websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=timeout)
        msg_id, out = uuid.uuid4().hex, []
        try:
            ws.send(json.dumps({"header": {"msg_id": msg_id, "username": self.name, "session": uuid.uuid4().hex,
                                           "msg_type": "execute_request", "version": "5.3"},
                                "parent_header": {}, "metadata": {}, "channel": "shell",
                                "content": {"code": code, "silent": False, "store_history": False,
                                            "user_expressions": {}, "allow_stdin": False}}))
            # The reply (shell channel) and the output (iopub) travel separately and the reply may
            # come first; the output is complete only when iopub says the kernel is idle again.
            replied = idle = False
            while not (replied and idle):
                msg = json.loads(ws.recv())
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = msg["header"]["msg_type"]
                if kind == "stream":
                    out.append(msg["content"]["text"])
                elif kind == "error":
                    out.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")
                elif kind == "execute_reply" and msg["channel"] == "shell":
                    replied = True
                elif kind == "status" and msg["content"].get("execution_state") == "idle":
                    idle = True
            return "".join(out)
        finally:
            ws.close()

    def shutdown_kernels(self) -> None:
        for s in self.api("GET", f"{self.user_path()}/api/sessions").json():
            self.api("DELETE", f"{self.user_path()}/api/sessions/{s['id']}")


def code_cells(path) -> list[str]:
    return [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]


def memory_by_account(names: list[str]) -> dict[str, dict[str, int]]:
    """Resident memory (bytes) per account: its single-user server, its kernels, everything else."""
    out = {n: {"server": 0, "kernel": 0, "other": 0} for n in names}
    for p in psutil.process_iter(["username", "cmdline", "memory_info"]):
        user = p.info["username"]
        if user not in out or p.info["memory_info"] is None:
            continue
        cmd = " ".join(p.info["cmdline"] or [])
        role = "server" if "jupyterhub-singleuser" in cmd else "kernel" if "ipykernel" in cmd else "other"
        out[user][role] += p.info["memory_info"].rss
    return out


def hub_memory(hub_pid: int) -> int:
    """Resident memory of the hub process and its children (the proxy, the idle culler)."""
    try:
        hub = psutil.Process(hub_pid)
    except psutil.NoSuchProcess:
        return 0
    procs = [hub] + [c for c in hub.children(recursive=True) if c.username() == "root"]
    return sum(p.memory_info().rss for p in procs if p.is_running())
