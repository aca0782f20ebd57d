"""JupyterHub's configuration for the training room; `make room` (tools/room/room.py) starts the hub with it.

Every setting comes from ``$CHUNKLAB_ROOM_STATE/room.json``, which the launcher writes: this file
only maps the room onto JupyterHub's options. See the README ("A training room") and the
trainer's guide for what each one is for.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import roomlib  # noqa: E402

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file

state = Path(os.environ["CHUNKLAB_ROOM_STATE"])
room = roomlib.load_settings(state)
scheme = "https" if room.get("ssl_cert") else "http"

# --- where it listens: one public address and port; everything else on 127.0.0.1 ---------------
c.JupyterHub.bind_url = f"{scheme}://{room['ip']}:{room['port']}/"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{room['port'] + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{room['port'] + 2}"
c.ConfigurableHTTPProxy.command = [str(Path(room["root"]) / "tools/room/node_modules/.bin/configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.Spawner.ip = "127.0.0.1"
if room.get("ssl_cert"):
    c.JupyterHub.ssl_cert = room["ssl_cert"]
    c.JupyterHub.ssl_key = room["ssl_key"]

# --- state that survives a restart: users, servers, cookies ------------------------------------
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")

# --- who may log in: the trainees and the trainer (admin), with their system passwords ----------
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = set(room["trainees"]) | {room["trainer"]}
# The trainer is not a full admin (JupyterHub's admin role may open every server): a role of its
# own shows the admin page, lists trainees and stops or starts their servers, and grants no access
# to a trainee's server, so a trainee's notebooks stay theirs.
c.Authenticator.admin_users = set()
TRAINER_ROLE = {"name": "trainer", "users": [room["trainer"]],
                "scopes": ["admin-ui", "list:users", "read:users", "read:users:activity", "read:servers",
                           "servers", "read:roles:users"]}

# --- each trainee's server: JupyterLab from the book's venv, their own copy of the chapters ------
c.JupyterHub.spawner_class = roomlib.make_spawner_class()
c.Spawner.cmd = [str(Path(room["venv_bin"]) / "python"), "-m", "jupyterhub.singleuser"]
c.Spawner.notebook_dir = f"~/{roomlib.BOOK_DIR}"
c.Spawner.default_url = "/lab/tree/chapters"
c.Spawner.args = list(room.get("server_args", []))
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
if room["limits"]["memory"]:
    c.Spawner.mem_limit = room["limits"]["memory"]
if room["limits"]["cpus"]:
    c.Spawner.cpu_limit = room["limits"]["cpus"]

# --- idle servers are stopped, as `make lab` culls idle kernels ---------------------------------
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={room['idle_timeout']}"],
}]
c.JupyterHub.load_roles = [TRAINER_ROLE, {
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
for name, token in room.get("api_tokens", {}).items():   # the room test's service token, if any
    c.JupyterHub.services.append({"name": name, "api_token": token})
    c.JupyterHub.load_roles.append({"name": f"{name}-role", "scopes": ["admin:users", "admin:servers",
                                                                        "list:users", "tokens"],
                                    "services": [name]})
