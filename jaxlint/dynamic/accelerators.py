"""Which accelerator JAX would open on this machine, found the way JAX finds one, without importing JAX.

Importing JAX is harmless, but starting its backend opens the chip, and a TPU chip can be held by
one process only: a second one fails to start (libtpu's "multi-process lockfile" error) and does
not fall back to the CPU. So the linter reads the same signs JAX reads (JAX 0.10, `jax/__init__`
-> `cloud_tpu_init`, `xla_bridge.backends`, `hardware_utils`):

- `JAX_PLATFORMS`, when set, names the platforms in order: the first accelerator there is it, and
  `cpu` alone means none;
- a TPU: libtpu can be loaded (`TPU_LIBRARY_PATH` names a file, or the `libtpu` package is
  installed) and a TPU chip is on the PCI bus (Google's vendor id with a TPU device id), or
  `JAX_FORCE_TPU_INIT` is set. Where /sys hides the PCI bus (some containers), JAX still tries the
  TPU whenever libtpu is installed, so a TPU device file (`/dev/accel*`, or a VFIO group in
  `/dev/vfio`, through which sandboxed hosts pass the chip) counts as a chip;
- an NVIDIA GPU: a CUDA plugin is installed and `/dev/nvidia0`, `/dev/nvidiactl` or `/dev/dxg`
  exists (JAX skips CUDA without one of them);
- an AMD GPU: a ROCm plugin is installed and the KFD driver lists a GPU node.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from dataclasses import dataclass

GOOGLE_PCI_VENDOR = "0x1ae0"
TPU_PCI_DEVICES = {"0x0027", "0x0056", "0x005e", "0x0062", "0x0063", "0x006f", "0x0076"}
NVIDIA_DEVICES = ("/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg")
ACCELERATOR_PLATFORMS = {"tpu": "tpu", "cuda": "gpu", "gpu": "gpu", "rocm": "gpu"}
# How a backend that another process holds fails to start: libtpu's lock file, or the device itself.
BUSY = re.compile(r"libtpu multi-process lockfile|TPU is already in use|Device or resource busy|"
                  r"already in use by (another )?process", re.I)


@dataclass(frozen=True)
class Accelerator:
    backend: str  # what `--backend` and jax.default_backend() call it: "tpu" or "gpu"
    evidence: str  # how it was found, for messages


def detect(environ=None, root: str = "/", path: list[str] | None = None) -> Accelerator | None:
    """The accelerator JAX would start by default here, or None (the CPU). `root` and `path` (the
    import path) stand in for the machine's in tests."""
    environ = os.environ if environ is None else environ
    path = sys.path if path is None else path
    platforms = [p.strip().lower() for p in environ.get("JAX_PLATFORMS", "").split(",") if p.strip()]
    if platforms:
        named = next((p for p in platforms if p in ACCELERATOR_PLATFORMS), None)
        return Accelerator(ACCELERATOR_PLATFORMS[named], f"JAX_PLATFORMS={','.join(platforms)}") if named else None
    if _libtpu(environ, path):
        chips = _tpu_chips(root)
        if chips or "JAX_FORCE_TPU_INIT" in environ:
            return Accelerator("tpu", f"libtpu and {chips} TPU chip(s) on the PCI bus" if chips
                               else "libtpu and JAX_FORCE_TPU_INIT")
        files = _tpu_device_files(root)
        if files:
            return Accelerator("tpu", f"libtpu and {files[0]}")
    if _plugin(path, "cuda") and any(os.path.exists(_under(root, d)) for d in NVIDIA_DEVICES):
        return Accelerator("gpu", "a JAX CUDA plugin and an NVIDIA device")
    if _plugin(path, "rocm") and _kfd_gpus(root):
        return Accelerator("gpu", "a JAX ROCm plugin and an AMD GPU")
    return None


def busy(message: str) -> bool:
    """Whether a backend failed to start because another process holds the device."""
    return bool(BUSY.search(message))


def _under(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def _libtpu(environ, path: list[str]) -> bool:
    library = environ.get("TPU_LIBRARY_PATH")
    if library and os.path.isfile(library):
        return True
    return any(os.path.isfile(os.path.join(entry, "libtpu", "__init__.py")) for entry in path if entry)


def _tpu_chips(root: str) -> int:
    chips = 0
    for vendor in glob.glob(_under(root, "/sys/bus/pci/devices/*/vendor")):
        try:
            with open(vendor, encoding="ascii") as f:
                if f.read().strip() != GOOGLE_PCI_VENDOR:
                    continue
            with open(os.path.join(os.path.dirname(vendor), "device"), encoding="ascii") as f:
                chips += f.read().strip() in TPU_PCI_DEVICES
        except (OSError, UnicodeDecodeError):
            continue
    return chips


def _tpu_device_files(root: str) -> list[str]:
    found = sorted(glob.glob(_under(root, "/dev/accel[0-9]*")))
    found += sorted(p for p in glob.glob(_under(root, "/dev/vfio/*")) if os.path.basename(p).isdigit())
    return [os.path.join("/", os.path.relpath(p, root)) for p in found]


def _plugin(path: list[str], kind: str) -> bool:
    """A JAX PJRT plugin for `kind` ("cuda" or "rocm"): a `jax_<kind>NN_plugin` package or a
    `jax_plugins/xla_<kind>NN` namespace module, as JAX discovers them."""
    for entry in path:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names = os.listdir(entry)
            plugins = os.listdir(os.path.join(entry, "jax_plugins")) if "jax_plugins" in names else []
        except OSError:
            continue
        if any(re.fullmatch(rf"jax_{kind}\d+_plugin", n) for n in names) or \
                any(n.startswith(f"xla_{kind}") for n in plugins):
            return True
    return False


def _kfd_gpus(root: str) -> bool:
    for props in glob.glob(_under(root, "/sys/class/kfd/kfd/topology/nodes/*/properties")):
        try:
            with open(props, encoding="ascii", errors="replace") as f:
                m = re.search(r"\bsimd_count\s+(\d+)", f.read(16384))
        except OSError:
            continue
        if m and int(m.group(1)) > 0:
            return True
    return False
