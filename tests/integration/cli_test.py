#!/usr/bin/env python3
"""The edgetap command line as an operator meets it: `edgetap ctl` against a
running edgetapd (list, stats, add-point, remove-point, --json, exit status),
the messages of `edgetap ctl` and `edgetap tail` when the socket is missing or
closed to the user, `edgetap check-config` failing what start-up would, and
`edgetap run` naming a bad flag, and edgetapd run by hand: its socket
directory explained, --socket and --control-socket; and every program and
subcommand taking -h and --opt=value alike (CLI11 reads them all).

usage: cli_test.py EDGETAPD EDGETAP [TEST...]
"""
import grp
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

EDGETAP = sys.argv.pop(2) if len(sys.argv) > 2 else "edgetap"
EDGETAPD = sys.argv.pop(1) if len(sys.argv) > 1 else "edgetapd"
# edgetapd refuses to run as root unless told to (where it knows --allow-root); CI containers often are root.
AS_ROOT = (["--allow-root"] if os.geteuid() == 0 and "--allow-root" in
           subprocess.run([EDGETAPD, "--help"], capture_output=True, text=True).stdout else [])
NOBODY = 65534


def as_nobody(*command):
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]


def nobody_can_run():
    """Root can act as user nobody, and nobody can reach both programs (the build tree may be private)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    return all(subprocess.run(as_nobody(program, "--help"), capture_output=True).returncode == 0
               for program in [EDGETAP, EDGETAPD])


def edgetap(*args, nobody=False, timeout=30):
    """Runs edgetap ARGS (as user nobody, with no other groups, when `nobody`)."""
    command = as_nobody(EDGETAP, *args) if nobody else [EDGETAP, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


class Workdir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.chmod(self.dir, 0o755)  # other users may look in (the permission tests)
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)


class CtlTest(Workdir):
    """edgetap ctl against a running daemon with one klt camera."""

    def setUp(self):
        super().setUp()
        self.control = self.path("control.sock")
        self.config = self.path("edgetap.yaml")
        with open(self.config, "w") as f:
            f.write(f"publisher: {{socket: {self.path('tracks.sock')}}}\ncontrol: {{socket: {self.control}}}\n"
                    "metrics: {listen: ''}\ncameras:\n"
                    "  - name: north\n    source: test:pinwheel?width=320&height=240&fps=20&speed=1\n"
                    "    tracker: klt\n    model_size: [128, 96]\n    queries: {grid: [4, 3]}\n")
        self.log = open(self.path("daemon.log"), "w+")
        self.addCleanup(self.log.close)
        self.daemon = subprocess.Popen([EDGETAPD, "--config", self.config, *AS_ROOT], stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self.addCleanup(self.stop)
        self.wait_tracking()

    def stop(self):
        if self.daemon.poll() is None:
            self.daemon.terminate()
            self.daemon.wait(10)

    def wait_tracking(self):
        """Until the camera has tracked a frame (add-point needs one)."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            done = edgetap("ctl", "--socket", self.control, "--json", "stats")
            if done.returncode == 0 and json.loads(done.stdout)["cameras"][0]["frames_tracked"] > 0:
                return
            time.sleep(0.2)
        self.log.seek(0)
        self.fail("the camera tracked no frame within 20 s; daemon log:\n" + self.log.read())

    def ctl(self, *args):
        return edgetap("ctl", "--socket", self.control, *args)

    def test_list_shows_a_table(self):
        done = self.ctl("list")
        self.assertEqual(done.returncode, 0, done.stderr)
        header, row = done.stdout.splitlines()
        self.assertEqual(header.split(), ["NAME", "STATE", "TRACKER", "MODEL", "QUERIES", "POINTS", "SOURCE"])
        self.assertEqual(row.split()[:5], ["north", "running", "klt", "128x96", "grid"], done.stdout)

    def test_json_prints_the_reply(self):
        done = self.ctl("--json", "list")
        self.assertEqual(done.returncode, 0, done.stderr)
        reply = json.loads(done.stdout)
        self.assertTrue(reply["ok"])
        self.assertEqual(reply["cameras"][0]["name"], "north")

    def test_socket_from_the_configuration(self):
        done = edgetap("ctl", "--config", self.config, "stats")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.startswith("north: running,"), done.stdout)
        self.assertIn("track socket:", done.stdout)

    def test_stats_of_one_camera(self):
        done = self.ctl("stats", "--camera", "north")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.startswith("north: running,"), done.stdout)
        self.assertIn("frames:", done.stdout)
        self.assertNotIn("track socket:", done.stdout)
        raw = json.loads(self.ctl("--json", "stats", "--camera", "north").stdout)
        self.assertEqual([c["name"] for c in raw["cameras"]], ["north"])
        missing = self.ctl("stats", "--camera", "gate")
        self.assertEqual(missing.returncode, 1)
        self.assertIn("no camera named 'gate' (cameras: north)", missing.stderr)

    def test_add_and_remove_points(self):
        added = self.ctl("add-point", "north", "door", "40", "30", "sill", "60.5", "70")
        self.assertEqual(added.returncode, 0, added.stderr)
        self.assertEqual(added.stdout.strip(), "added 2 point(s) to north: door sill")
        removed = self.ctl("remove-point", "north", "door")
        self.assertEqual(removed.returncode, 0, removed.stderr)
        self.assertEqual(removed.stdout.strip(), "removed 1 point(s) from north: door")
        again = self.ctl("remove-point", "north", "door")
        self.assertEqual(again.returncode, 1, "a rejected id is a failure")
        self.assertIn("rejected door:", again.stdout)

    def test_daemon_errors_exit_non_zero(self):
        done = self.ctl("add-point", "gate", "door", "1", "2")
        self.assertEqual(done.returncode, 1)
        self.assertIn("edgetap ctl: add-point: no camera named 'gate'", done.stderr)
        raw = self.ctl("--json", "remove-point", "gate", "door")
        self.assertEqual(raw.returncode, 1)
        self.assertFalse(json.loads(raw.stdout)["ok"])

    def test_usage_errors(self):
        for args, message in [(["add-point", "north", "door", "1"], "add-point needs CAMERA and then ID X Y"),
                              (["add-point", "north", "door", "1", "y"], "Y must be a number of source pixels, not 'y'"),
                              (["remove-point", "north"], "remove-point needs CAMERA and at least one ID"),
                              (["frobnicate"], "unknown command 'frobnicate'"),
                              ([], "which command?")]:
            done = self.ctl(*args)
            self.assertEqual(done.returncode, 2, args)
            self.assertIn(message, done.stderr)


def listening_socket(path, group):
    """A listening Unix socket at `path`, mode 0660, owned by root:`group`."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen()
    os.chown(path, 0, grp.getgrnam(group).gr_gid)
    os.chmod(path, 0o660)
    return server


class SocketProblemsTest(Workdir):
    """What ctl and tail say when the socket is missing or closed to the user."""

    def test_missing_socket(self):
        for command, key in [("ctl", "control.socket"), ("tail", "publisher.socket")]:
            path = self.path("nowhere/edgetap.sock")
            done = edgetap(command, "--socket", path, *(["list"] if command == "ctl" else []))
            self.assertEqual(done.returncode, 1, command)
            self.assertIn(f"cannot connect to {path}: No such file or directory", done.stderr)
            self.assertIn(f"its directory {self.path('nowhere')} does not exist either", done.stderr)
            self.assertIn("is edgetapd running? (`systemctl status edgetapd`)", done.stderr)
            self.assertIn(key, done.stderr)

    def test_closed_socket(self):
        path = self.path("stale.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.close()  # the file stays, nothing listens
        done = edgetap("tail", "--socket", path)
        self.assertEqual(done.returncode, 1)
        self.assertIn("Connection refused: the socket file is there but nothing listens on it", done.stderr)

    @unittest.skipUnless(nobody_can_run(), "needs root acting as user nobody, who can run the programs")
    def test_permission_denied_names_the_group(self):
        group = "edgetap" if "edgetap" in [g.gr_name for g in grp.getgrall()] else "root"
        path = self.path("tracks.sock")
        server = listening_socket(path, group)
        self.addCleanup(server.close)
        for command in ["ctl", "tail"]:
            done = edgetap(command, "--socket", path, *(["list"] if command == "ctl" else []), nobody=True)
            self.assertEqual(done.returncode, 1, command)
            self.assertIn(f"cannot connect to {path}: Permission denied", done.stderr)
            self.assertIn(f"{path} is open to members of group '{group}', and user 'nobody' is not one", done.stderr)
            self.assertIn(f"`sudo adduser $USER {group}`", done.stderr)


class CheckConfigTest(Workdir):
    """edgetap check-config fails what start-up would fail: the models a camera runs."""

    def check(self, settings):
        with open(self.path("edgetap.yaml"), "w") as f:
            f.write("cameras:\n  - name: gate\n    source: test:ball\n    tracker: edgetap\n" + settings)
        return edgetap("check-config", self.path("edgetap.yaml"))

    def test_the_bundled_model_at_a_good_size(self):
        done = self.check("    model_size: [320, 224]\n")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("edgetap.yaml: ok, 1 camera(s)", done.stdout)

    def test_model_size_not_a_multiple_of_32(self):
        done = self.check("    model_size: [320, 250]\n")
        self.assertEqual(done.returncode, 78, done.stdout)
        self.assertRegex(done.stderr, r"edgetap\.yaml:5:17: cameras\[0\] \(camera 'gate'\)\.model_size: 320x250 does "
                                      r"not suit the edgetap model \S+edgetap-small\.safetensors: both sides must be "
                                      r"multiples of 32 \(e\.g\. 320x256\)")

    def test_a_missing_model_names_the_safetensors(self):
        done = self.check("    edgetap:\n      model: weights/mine.safetensors\n")
        self.assertEqual(done.returncode, 78, done.stdout)
        self.assertIn(f"edgetap.yaml:6:14: cameras[0] (camera 'gate').edgetap.model: no model file "
                      f"{self.path('weights/mine.safetensors')}", done.stderr)


class PercentEncodedFileTest(Workdir):
    """A file:// URI as file managers write it: my%20clip.avi is "my clip.avi"."""

    def test_run_tracks_a_file_named_with_percent_escapes(self):
        clip = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../assets/demo/vtest-pedestrians.avi")
        shutil.copy(clip, self.path("my clip.avi"))
        done = edgetap("run", "--source", f"file://{self.dir}/my%20clip.avi", "--tracker", "klt", "--grid", "2",
                       "--duration", "5", "--out", self.path("out"), "--socket", self.path("run.sock"), timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn(f"wrote {self.path('out')}/demo-tracks.png", done.stdout)


class RunFlagsTest(Workdir):
    """edgetap run names a bad one-camera flag as the flag, not as a line of a file."""

    def run_with(self, *args):
        done = edgetap("run", "--out", self.path("out"), "--duration", "5", *args)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertNotRegex(done.stderr, r"--source:\d+:\d+")  # a position in a file nobody wrote
        return done.stderr

    def test_bad_values(self):
        self.assertEqual(self.run_with("--tracker", "kltt"), "edgetap run: --tracker must be edgetap or klt, not 'kltt'\n")
        self.assertEqual(self.run_with("--pace", "slow"), "edgetap run: --pace must be fast or realtime, not 'slow'\n")
        self.assertIn("edgetap run: --source: unsupported source 'camera1'", self.run_with("--source", "camera1"))
        self.assertIn("edgetap run: --source: malformed percent-escape", self.run_with("--source", "file:///a%zz.avi"))
        self.assertEqual(self.run_with("--source", f"file://{self.path('none.avi')}"),
                         f"edgetap run: --source: no file {self.path('none.avi')}\n")

    def test_one_camera_flags_do_not_go_with_a_file(self):
        self.assertEqual(self.run_with("--config", self.path("edgetap.yaml"), "--tracker", "klt", "--grid", "4"),
                         "edgetap run: --config FILE cannot go with --tracker, --grid, which make a one-camera run "
                         "(set those in FILE)\n")


class DaemonSocketsTest(Workdir):
    """edgetapd run by hand: a socket directory that is missing or not writable is
    explained, and --socket/--control-socket put the sockets elsewhere."""

    def write_config(self, directory):
        config = self.path("edgetap.yaml")
        with open(config, "w") as f:
            f.write(f"publisher: {{socket: {directory}/tracks.sock}}\ncontrol: {{socket: {directory}/control.sock}}\n"
                    "metrics: {listen: ''}\ncameras:\n  - name: north\n    source: test:ball?fps=20\n"
                    "    tracker: klt\n    model_size: [128, 96]\n    queries: {grid: [4, 3]}\n")
        return config

    def test_a_missing_directory_is_explained(self):
        missing = self.path("run/edgetap")
        config = self.write_config(missing)
        done = subprocess.run([EDGETAPD, "--config", config, *AS_ROOT], capture_output=True, text=True, timeout=30,
                              env=dict(os.environ, XDG_RUNTIME_DIR="/run/user/1000"))
        self.assertEqual(done.returncode, 1, done.stderr)
        for key, flag, name in [("publisher.socket", "--socket", "tracks.sock"),
                                ("control.socket", "--control-socket", "control.sock")]:
            self.assertIn(f"cannot create the socket {missing}/{name} ({key}): its directory {missing} does not exist; "
                          f"to run outside the service, pass {flag} /run/user/1000/{name} (or set {key} in {config}) "
                          "for a directory you can write", done.stderr)
        ran = edgetap("run", "--config", config, "--out", self.path("out"))
        self.assertEqual(ran.returncode, 1, ran.stderr)
        self.assertIn(f"edgetap run: cannot create the socket {missing}/tracks.sock (publisher.socket)", ran.stderr)

    @unittest.skipUnless(nobody_can_run(), "needs root acting as user nobody, who can run the programs")
    def test_an_unwritable_directory_is_explained(self):
        config = self.write_config(self.dir)  # root's, mode 0755
        os.chmod(config, 0o644)
        done = subprocess.run(as_nobody(EDGETAPD, "--config", config), capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn(f"cannot create the socket {self.dir}/tracks.sock (publisher.socket): user 'nobody' cannot "
                      f"create files in {self.dir} (Permission denied); to run outside the service, pass --socket",
                      done.stderr)

    def test_socket_flags_win_over_the_file_also_on_reload(self):
        config = self.write_config(self.path("run/edgetap"))
        control, tracks = self.path("c.sock"), self.path("t.sock")
        log = open(self.path("daemon.log"), "w+")
        self.addCleanup(log.close)
        daemon = subprocess.Popen([EDGETAPD, "--config", config, "--socket", tracks, "--control-socket", control,
                                   *AS_ROOT], stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: daemon.poll() is None and (daemon.terminate(), daemon.wait(10)))
        for reloaded in [False, True]:
            if reloaded:
                daemon.send_signal(signal.SIGHUP)
                time.sleep(1)
            listed = edgetap("ctl", "--socket", control, "list")
            deadline = time.monotonic() + 15
            while listed.returncode != 0 and time.monotonic() < deadline:
                time.sleep(0.2)
                listed = edgetap("ctl", "--socket", control, "list")
            log.seek(0)
            self.assertEqual(listed.returncode, 0, listed.stderr + log.read())
            tailed = edgetap("tail", "--socket", tracks, "--count", "1")
            self.assertEqual(tailed.returncode, 0, tailed.stderr)
            self.assertTrue(tailed.stdout.startswith("north"), tailed.stdout)
        self.assertIsNone(daemon.poll(), "edgetapd stopped")


class CommandLineTest(Workdir):
    """-h and --opt=value work for edgetapd and every edgetap subcommand; usage errors exit 2."""

    def run_program(self, *command):
        return subprocess.run(list(command), capture_output=True, text=True, timeout=30)

    def test_dash_h_lists_each_option_with_its_meaning(self):
        for command, options in [
                ([EDGETAPD], ["--config", "--socket", "--control-socket", "--log-level", "--stats-every",
                              "--allow-root", "--version"]),
                ([EDGETAP], ["run", "tail", "ctl", "check-config", "eval"]),
                ([EDGETAP, "run"], ["--config", "--source", "--grid", "--tracker", "--pace", "--socket", "--out",
                                    "--duration", "--log-level"]),
                ([EDGETAP, "tail"], ["--socket", "--camera", "--count", "--raw", "--wait"]),
                ([EDGETAP, "ctl"], ["--socket", "--config", "--camera", "--json", "--timeout", "add-point"]),
                ([EDGETAP, "check-config"], ["FILE", "Exit status"]),
                ([EDGETAP, "eval"], ["--tracker", "--mode", "--iters", "--model", "--no-refinement", "--support-grid",
                                     "--size", "--every", "--json", "--overlay", "--gt-free", "--frames", "--grid",
                                     "--quiet", "--record-trace", "--replay-trace"])]:
            for flag in ["-h", "--help"]:
                done = self.run_program(*command, flag)
                self.assertEqual(done.returncode, 0, (command, flag, done.stderr))
                for option in options:
                    self.assertIn(option, done.stdout, (command, flag))
        # Each option comes with what it does.
        help_text = self.run_program(EDGETAP, "tail", "-h").stdout
        self.assertRegex(help_text, r"--count N\s+exit after N track messages")

    def test_opt_equals_value_is_read_as_opt_value(self):
        for command, message in [
                ([EDGETAP, "run", "--grid=0"], "edgetap run: --grid must be an integer 1..256, not '0'\n"),
                ([EDGETAP, "run", "--duration=-1"], "edgetap run: --duration must be seconds 0..1e+09, not '-1'\n"),
                ([EDGETAP, "run", "--tracker=kltt"], "edgetap run: --tracker must be edgetap or klt, not 'kltt'\n"),
                ([EDGETAP, "run", "--log-level=loud"], "edgetap run: unknown log level 'loud'\n"),
                ([EDGETAP, "tail", "--count=abc"], "edgetap tail: --count must be an integer 1..1000000000, not 'abc'\n"),
                ([EDGETAP, "ctl", "--timeout=0", "list"], "edgetap ctl: --timeout must be seconds 0.1..3600, not '0'\n"),
                ([EDGETAP, "eval", "--mode=sideways", "x"],
                 "edgetap eval: --mode must be first, strided or both, not 'sideways'\n"),
                ([EDGETAP, "eval", "--iters=17", "x"], "edgetap eval: --iters must be an integer 1..16, not '17'\n"),
                ([EDGETAPD, "--stats-every=-1"], "edgetapd: --stats-every must be an integer 0..31536000, not '-1'\n"),
                ([EDGETAPD, "--log-level=loud"], "edgetapd: unknown log level 'loud'\n")]:
            done = self.run_program(*command)
            self.assertEqual((done.returncode, done.stderr), (2, message), command)
        # A value given with = reaches the program: the socket named is the one tried.
        path = self.path("none.sock")
        for command in [[EDGETAP, "tail", f"--socket={path}"], [EDGETAP, "ctl", f"--socket={path}", "list"]]:
            done = self.run_program(*command)
            self.assertEqual(done.returncode, 1, command)
            self.assertIn(f"cannot connect to {path}: No such file or directory", done.stderr)

    def test_unknown_options_and_missing_values_are_usage_errors(self):
        for command in [[EDGETAPD, "--frobnicate"], [EDGETAPD, "--config"], [EDGETAP, "run", "--frobnicate"],
                        [EDGETAP, "tail", "--count"], [EDGETAP, "ctl", "--frobnicate", "list"],
                        [EDGETAP, "check-config"], [EDGETAP, "eval", "--frobnicate", "x"], [EDGETAP, "frobnicate"]]:
            done = self.run_program(*command)
            self.assertEqual(done.returncode, 2, (command, done.stderr))
            self.assertTrue(done.stderr.strip(), command)


if __name__ == "__main__":
    unittest.main()
