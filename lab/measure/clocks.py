"""The GPU's SM clock and slowdown reasons, read through NVML around every block of samples
(lab.measure.timing.interleave); the static clock facts go into a run's env.json."""

from __future__ import annotations

import contextlib
import os
import threading
import time


# NVML's clock event reason bits (nvml.h's nvmlClocksEventReason*), to read a recorded `clock_reasons` without NVML.
REASON_BITS = {"SW_POWER_CAP": 0x4, "HW_SLOWDOWN": 0x8, "SW_THERMAL_SLOWDOWN": 0x20, "HW_THERMAL_SLOWDOWN": 0x40,
               "HW_POWER_BRAKE_SLOWDOWN": 0x80}
# The slowdowns that drop a sustained sample: the hardware's alone. Under minutes of back-to-back load the driver's
# thermal slowdown (SW_THERMAL_SLOWDOWN) is, like the power cap, the state the sustained mode measures: a kernel that
# heats the GPU more is slowed more, as one that draws more power is (data/checks/2026-12-05-h100-run-step69: on a
# board at 69-80 C it held 56 % of the sustained samples and left rows with none).
SUSTAINED_SLOWDOWN_NAMES = ("HW_SLOWDOWN", "HW_THERMAL_SLOWDOWN", "HW_POWER_BRAKE_SLOWDOWN")
SUSTAINED_SLOWDOWN_MASK = sum(REASON_BITS[n] for n in SUSTAINED_SLOWDOWN_NAMES)


class Clocks:
    """SM clock and throttle reasons through NVML (nvidia-ml-py); inert where NVML is missing."""

    # Slowdowns that make a burst (hot or cold) sample unrepresentative. The power cap (SW_POWER_CAP) is left out: a
    # GPU at full load sits at it routinely, and dropping those samples would drop everything. A sustained sample
    # is dropped for SUSTAINED_SLOWDOWN_NAMES alone (lab.measure.timing.interleave, lab.measure.records.dropped).
    THROTTLE_MASK_NAMES = ("HW_SLOWDOWN", "HW_THERMAL_SLOWDOWN", "SW_THERMAL_SLOWDOWN", "HW_POWER_BRAKE_SLOWDOWN")

    def __init__(self, device_index: int | None = None):
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            if device_index is None:
                device_index = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0)
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
            self.mask = 0
            for name in self.THROTTLE_MASK_NAMES:
                self.mask |= getattr(pynvml, f"nvmlClocksThrottleReason{_camel(name)}", 0) or getattr(
                    pynvml, f"nvmlClocksEventReason{_camel(name)}", 0)
        except Exception:  # noqa: BLE001 - no NVML: clocks are recorded as missing
            self.handle = None

    def static_info(self) -> dict:
        if self.handle is None:
            return {"nvml": False}
        n = self.nvml
        info = {"nvml": True}
        for key, fn in (("driver", lambda: n.nvmlSystemGetDriverVersion()),
                        ("sm_clock_max_mhz", lambda: n.nvmlDeviceGetMaxClockInfo(self.handle, n.NVML_CLOCK_SM)),
                        ("mem_clock_max_mhz", lambda: n.nvmlDeviceGetMaxClockInfo(self.handle, n.NVML_CLOCK_MEM)),
                        ("sm_clock_now_mhz", lambda: n.nvmlDeviceGetClockInfo(self.handle, n.NVML_CLOCK_SM)),
                        ("power_limit_w", lambda: n.nvmlDeviceGetPowerManagementLimit(self.handle) / 1000)):
            try:
                v = fn()
                info[key] = v.decode() if isinstance(v, bytes) else v
            except Exception:  # noqa: BLE001
                info[key] = None
        return info

    def sm_clock(self) -> float | None:
        """The current SM clock in MHz; None without NVML or where it cannot give one."""
        if self.handle is None:
            return None
        try:
            return float(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001
            return None

    def read(self) -> tuple[float | None, bool]:
        """(current SM clock in MHz, whether a thermal/hardware slowdown is active)."""
        clock = self.sm_clock()
        if clock is None:
            return None, False
        n = self.nvml
        try:
            get = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
            return clock, bool(get(self.handle) & self.mask)
        except Exception:  # noqa: BLE001
            return None, False

    def during(self, period_s: float = 0.005) -> "ClockTrace | None":
        """A ClockTrace of the SM clock (sm_clock) for a `with` block (the sustained mode's turn); None without NVML."""
        return None if self.handle is None else ClockTrace(self.sm_clock, period_s)

    def load(self) -> dict:
        """What the GPU is doing under the load of the moment: power draw (W), temperature (C) and the
        bitmask of its clock event (throttle) reasons, the power cap's included; {} without NVML."""
        if self.handle is None:
            return {}
        n = self.nvml
        out = {}
        get = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        for key, fn in (("power_w", lambda: n.nvmlDeviceGetPowerUsage(self.handle) / 1000),
                        ("temp_c", lambda: float(n.nvmlDeviceGetTemperature(self.handle, n.NVML_TEMPERATURE_GPU))),
                        ("clock_reasons", lambda: int(get(self.handle)))):
            try:
                out[key] = fn()
            except Exception:  # noqa: BLE001 - a reading NVML cannot give is left out
                pass
        return out


class ClockTrace:
    """The SM clock read by a thread every `period_s` while the `with` block runs: `reads`, (seconds since the
    block opened, MHz). The sustained mode's turn puts its GPU time in the block and waits for it there, so the
    reads span the turn; one reading before and after it (Clocks.read) says what the clock was between turns."""

    def __init__(self, read, period_s: float = 0.005):
        self.read, self.period_s, self.reads = read, period_s, []
        self._stop = threading.Event()
        self._thread = None
        self._t0 = 0.0

    def __enter__(self) -> "ClockTrace":
        self._t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            mhz = self.read()
            if mhz is not None:
                self.reads.append((time.perf_counter() - self._t0, mhz))
            self._stop.wait(self.period_s)

    def __exit__(self, *exc) -> bool:
        self._stop.set()
        self._thread.join()
        return False

    def mean_after(self, seconds: float) -> float | None:
        """The mean of the reads taken `seconds` or more into the block (a turn's kept part: after its settle);
        None where there are none."""
        kept = [mhz for t, mhz in self.reads if t >= seconds]
        return sum(kept) / len(kept) if kept else None


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.lower().split("_"))  # HW_SLOWDOWN -> HwSlowdown


def gpu_identity() -> dict:
    """Index (as the host numbers it), name and UUID of the GPU this process uses."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    info = {"gpu_index": int(visible) if visible.isdigit() else -1, "gpu_name": "", "gpu_uuid": visible
            if not visible.isdigit() else ""}
    try:
        import torch

        props = torch.cuda.get_device_properties(0)
        info["gpu_name"] = props.name
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            info["gpu_uuid"] = "GPU-" + str(uuid) if not str(uuid).startswith("GPU-") else str(uuid)
    except Exception:  # noqa: BLE001 - the NVML answer below may still name it
        pass
    if info["gpu_index"] >= 0 and not info["gpu_uuid"]:
        with contextlib.suppress(Exception):
            import pynvml

            pynvml.nvmlInit()
            uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(info["gpu_index"]))
            info["gpu_uuid"] = uuid.decode() if isinstance(uuid, bytes) else uuid
    return info
