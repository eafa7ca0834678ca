"""Compile a .tflite model with Vela (its Python core) for an Ethos-U65 (or another accelerator)
with a dedicated SRAM of a given size (memory mode ``Dedicated_Sram``: feature maps in DRAM,
the SRAM a cache they compete for), and print as JSON what its allocators decided, with what
they decided on:

* ``fast``: one entry per call of ``Scheduler.use_fast_storage_for_feature_maps``: the SRAM
  limit, and per live range of the SRAM (in Vela's order) its inclusive start and end, size,
  name, the names of its tensors, the purpose of the first, whether it competes (holds a
  feature map Vela moved there), whether it stayed, and the element accesses Vela estimated
  for its first tensor (what it scores a range by);
* ``climbs``: one entry per ``hillclimb_allocation.allocate_live_ranges`` call: the memory
  limit, iteration cap, the live ranges (start, end, size, alignment, name) and the addresses;
* ``used``: Vela's arenas in bytes: ``sram`` (all of the SRAM), ``scratch_fast`` (the SRAM
  arena) and ``scratch`` (the DRAM arena), from ``memory_used`` and ``memory_used_per_type``.

``python -m tests.replicas.vela_capture MODEL SRAM_BYTES OUT_DIR [ACCELERATOR]``. A process
per compile: Vela keeps global state between compiles. Used by ``tests/replicas/test_vela.py``
and ``benchmarks/vela.py``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

SYSTEM = "Test_U65"
MODE = "Test_Dedicated"
INI = """[System_Config.Test_U65]
core_clock=500e6
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
Dram_clock_scale=0.46875
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=12
Dram_max_writes=6

[Memory_Mode.Test_Dedicated]
const_mem_area=Axi1
arena_mem_area=Axi1
cache_mem_area=Axi0
arena_cache_size={size}
"""


def compile_model(model: str, sram: int, out_dir: str,
                  accelerator: str = "ethos-u65-256") -> dict:
    """Compile in a fresh process (deterministic hashing) and return what it captured."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "tests.replicas.vela_capture", model, str(sram),
                           out_dir, accelerator], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"vela failed on {model} with {sram} bytes of SRAM:\n"
                           f"{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _capture(model: str, sram: int, out_dir: str, accelerator: str) -> dict:
    # Vela's command first: its modules import one another in that order.
    cli = importlib.import_module("ethosu.vela.vela")
    from ethosu.vela import hillclimb_allocation, live_range, scheduler
    from ethosu.vela.tensor import MemArea, MemType

    ini = Path(out_dir) / f"vela_{sram}.ini"
    ini.write_text(INI.format(size=sram))
    fast_calls: list = []
    climbs: list = []
    current: dict = {}
    use_fast = scheduler.Scheduler.use_fast_storage_for_feature_maps
    extract = live_range.extract_live_ranges_from_schedule
    component = scheduler.FastStorageComponentAllocator.allocate_component
    climb = hillclimb_allocation.allocate_live_ranges

    def extract_kept(*args, **kwargs):
        graph = extract(*args, **kwargs)
        if "call" in current and current["call"].get("graph") is None:
            current["call"]["graph"] = graph
        return graph

    def component_kept(self, lrs, max_mem, min_mem, scratched, access, evicted):
        current["call"]["access"] = access
        return component(self, lrs, max_mem, min_mem, scratched, access, evicted)

    def use_fast_kept(self, schedule, staging_limit):
        call = {"graph": None, "access": {}}
        current["call"] = call
        try:
            use_fast(self, schedule, staging_limit)
        finally:
            del current["call"]
        rows = []
        for lr in call["graph"].lrs:
            moved = next((t for t in lr.tensors if t in self.scratched_fms), None)
            rows.append({"start": lr.start_time, "end": lr.end_time, "size": lr.size,
                         "name": lr.name, "tensors": [t.name for t in lr.tensors],
                         "purpose": lr.tensors[0].purpose.name, "competes": moved is not None,
                         "stays": moved is None
                         or moved.mem_area == self.arch.fast_storage_mem_area,
                         "access": int(call["access"].get(lr.tensors[0], 0))})
        fast_calls.append({"limit": int(staging_limit), "lrs": rows})

    def climb_kept(lrs, max_iterations, memory_limit):
        got = climb(lrs, max_iterations, memory_limit)
        climbs.append({"limit": int(memory_limit), "max_iterations": max_iterations,
                       "lrs": [[lr.start_time, lr.end_time, lr.size, lr.get_alignment(),
                                lr.name] for lr in lrs],
                       "addresses": [int(a) for a in got]})
        return got

    scheduler.Scheduler.use_fast_storage_for_feature_maps = use_fast_kept
    live_range.extract_live_ranges_from_schedule = extract_kept
    scheduler.FastStorageComponentAllocator.allocate_component = component_kept
    hillclimb_allocation.allocate_live_ranges = climb_kept
    used: dict = {}
    compiler = cli.process

    def process_kept(*args, **kwargs):
        nng = compiler(*args, **kwargs)
        root = nng.get_root_subgraph()
        used["sram"] = int(root.memory_used.get(MemArea.Sram, 0))
        used["scratch_fast"] = int(root.memory_used_per_type.get(MemType.Scratch_fast, 0))
        used["scratch"] = int(root.memory_used_per_type.get(MemType.Scratch, 0))
        return nng

    cli.process = process_kept
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main([model, "--accelerator-config", accelerator, "--config", str(ini),
                         "--system-config", SYSTEM, "--memory-mode", MODE,
                         "--debug-force-legacy-core", "--output-dir", out_dir])
    if code != 0:
        raise RuntimeError(f"vela returned {code}")
    return {"fast": fast_calls, "climbs": climbs, "used": used}


if __name__ == "__main__":
    print(json.dumps(_capture(*sys.argv[1:2], int(sys.argv[2]), *sys.argv[3:5])))
