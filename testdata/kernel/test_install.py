"""clink-kernel install / uninstall, checked with Jupyter's own tools."""
import json
import os
import struct
import subprocess
import tempfile
import unittest

BIN = os.environ.get("CLINK_KERNEL_BIN", "clink-kernel")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


class InstallTests(unittest.TestCase):
    def test_installed_spec_is_listed(self):
        # scripts/test-kernel installed it with --user into $JUPYTER_DATA_DIR.
        out = subprocess.run(["jupyter", "kernelspec", "list", "--json"], check=True,
                             capture_output=True, text=True).stdout
        specs = json.loads(out)["kernelspecs"]
        self.assertIn("clink", specs)
        spec = specs["clink"]["spec"]
        self.assertEqual(spec["language"], "sql")
        self.assertEqual(spec["display_name"], "clink SQL")
        self.assertEqual(spec["interrupt_mode"], "message")
        self.assertTrue(os.path.isabs(spec["argv"][0]))
        self.assertEqual(spec["argv"][1:], ["{connection_file}"])
        self.assertTrue(specs["clink"]["resource_dir"].startswith(os.environ["JUPYTER_DATA_DIR"]))
        plain = subprocess.run(["jupyter", "kernelspec", "list"], check=True,
                               capture_output=True, text=True).stdout
        self.assertIn("clink", plain)

    def test_prefix_install_and_uninstall(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([BIN, "install", "--prefix", d, "--name", "clink-test"], check=True,
                           capture_output=True)
            kdir = os.path.join(d, "share", "jupyter", "kernels", "clink-test")
            with open(os.path.join(kdir, "kernel.json")) as f:
                spec = json.load(f)
            self.assertEqual(spec["language"], "sql")
            self.assertIn("metadata", spec)
            self.assertEqual(png_size(os.path.join(kdir, "logo-32x32.png")), (32, 32))
            self.assertEqual(png_size(os.path.join(kdir, "logo-64x64.png")), (64, 64))
            # Jupyter finds it through JUPYTER_PATH.
            env = dict(os.environ, JUPYTER_PATH=os.path.join(d, "share", "jupyter"))
            out = subprocess.run(["jupyter", "kernelspec", "list", "--json"], check=True,
                                 capture_output=True, text=True, env=env).stdout
            self.assertIn("clink-test", json.loads(out)["kernelspecs"])
            subprocess.run([BIN, "uninstall", "--prefix", d, "--name", "clink-test"], check=True,
                           capture_output=True)
            self.assertFalse(os.path.exists(kdir))
            r = subprocess.run([BIN, "uninstall", "--prefix", d, "--name", "clink-test"],
                               capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no kernelspec", r.stderr)

    def test_user_install_honours_jupyter_data_dir(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, JUPYTER_DATA_DIR=d)
            subprocess.run([BIN, "install", "--user", "--name", "other"], check=True,
                           capture_output=True, env=env)
            self.assertTrue(os.path.exists(os.path.join(d, "kernels", "other", "kernel.json")))
            subprocess.run([BIN, "uninstall", "--name", "other"], check=True, capture_output=True, env=env)
            self.assertFalse(os.path.exists(os.path.join(d, "kernels", "other")))

    def test_conflicting_flags_refused(self):
        r = subprocess.run([BIN, "install", "--user", "--prefix", "/tmp/x"], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("exclude each other", r.stderr)


if __name__ == "__main__":
    unittest.main()
