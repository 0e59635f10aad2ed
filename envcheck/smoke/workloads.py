"""The smoke workloads: what a first training step does, with results verified.

These functions import torch and touch devices, so they only ever run in a child
process (``python -m envcheck.smoke.worker``) or under torchrun, never in the
envcheck process itself. The same code serves ``cuda`` and ``cpu`` devices and
the ``nccl`` and ``gloo`` backends. Each returns a dict of figures and raises
``SmokeFailure`` when a result is wrong.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# Relative error allowed against a float64 reference, per dtype. TF32 (on by
# default for cuDNN convs, opt-in for matmul) keeps a 10-bit mantissa like fp16.
TOLERANCE = {"float32": 1e-4, "tf32": 5e-3, "bfloat16": 3e-2, "float16": 5e-3}


class SmokeFailure(AssertionError):
    """A workload ran but its result is wrong."""


def error_text(exc: BaseException) -> str:
    """How a workload's exception reads in an answer: its type and message, at most 2000
    characters (the end, where torch puts what went wrong)."""
    import traceback

    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines).strip()[-2000:]


def relative_error(result: Any, reference: Any) -> float:
    """max |result - reference| / max |reference|, computed in float64."""
    diff = (result.double() - reference).abs().max().item()
    scale = reference.abs().max().item() or 1.0
    return float(diff / scale)


def check_close(name: str, result: Any, reference: Any, tolerance: float) -> float:
    err = relative_error(result, reference)
    if not err <= tolerance:  # also catches NaN
        raise SmokeFailure(f"{name}: relative error {err:.3g} exceeds {tolerance:g}")
    return err


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def low_precision(device: str) -> str:
    """The fast low precision this device supports: bf16 where it can, else fp16."""
    import torch

    if device.startswith("cuda"):
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "bfloat16"


# The timed window of each dtype and the length of each repeat in it, by device. A GPU gets
# 1 s of 0.1 s repeats: its clocks ramp up over the first few hundred ms, and a repeat must
# hold enough kernels for the launch and the sync to vanish in it. On the CPU a window
# costs its length times the threads in CPU time, on the machine whose CPU time the smoke
# run is, and the rate is steady from the first repeat after the warm-up: 0.25 s of 0.05 s
# repeats holds as many repeats (5) as 1 s did, for a quarter of the cost. Taking the
# dtypes' repeats in turn (``interleaved_repeats``) is what keeps such a window's figure
# as steady from run to run as the 1 s windows taken one after the other were.
WINDOW_S = {"cuda": 1.0, "cpu": 0.25}
REPEAT_S = {"cuda": 0.1, "cpu": 0.05}
# The warm-up goes on until one batch takes this long, and sizes the repeats from it. A GPU
# warms up for a whole repeat: its clock leaves idle over a while. On the CPU the result
# check has already run each dtype's matmul (kernel, allocator and thread pool are warm):
# a quarter of a repeat is long enough to time, and costs threads x the difference.
WARM_S = {"cuda": 0.1, "cpu": 0.0125}


def _kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else "cpu"


def matmul(device: str, size: int = 0, seconds: Optional[float] = None) -> Dict[str, Any]:
    """fp32 and low-precision matmul: checked against float64, then timed.

    Per dtype: ``{dtype}_tflops`` is the median over repeats of a window of at least
    ``seconds`` (default: the device's ``WINDOW_S``; the dtypes' repeats taken in turn, see
    ``interleaved_repeats``), with ``{dtype}_tflops_min``/``_max`` and the spread
    (max - min) / median, so one noisy repeat (another process taking a core, a clock
    ramping up) shows as spread instead of moving the figure. ``threads`` is torch's
    intra-op thread count: a CPU figure means nothing without it; ``{dtype}_cpu_share`` is
    the CPU time those threads got over the window's wall time (1.0: every thread ran all
    along; well below: other processes held the cores, and the figure is theirs to explain).
    """
    import torch

    size = size or (4096 if device.startswith("cuda") else 512)
    gen = torch.Generator().manual_seed(0)
    a64 = torch.randn(size, size, dtype=torch.float64, generator=gen)
    b64 = torch.randn(size, size, dtype=torch.float64, generator=gen)
    reference = a64 @ b64
    figures: Dict[str, Any] = {"size": size}
    if device.startswith("cuda"):
        figures["tf32_matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
    else:
        figures["threads"] = torch.get_num_threads()
        if hasattr(os, "getloadavg"):  # others' load on the same cores moves a CPU figure
            figures["load_avg_1m"] = round(os.getloadavg()[0], 2)
    pairs: Dict[str, Tuple[Any, Any]] = {}
    for name in ["float32", low_precision(device)]:
        a, b = a64.to(device, getattr(torch, name)), b64.to(device, getattr(torch, name))
        tol = TOLERANCE["tf32" if name == "float32" and figures.get("tf32_matmul") else name]
        figures[f"{name}_rel_error"] = check_close(f"{name} matmul", (a @ b).cpu(), reference, tol)
        pairs[name] = (a, b)
    kind = _kind(device)
    window, repeat = seconds or WINDOW_S[kind], REPEAT_S[kind]
    wall, cpu = time.perf_counter(), time.process_time()
    rates = interleaved_repeats(list(pairs.values()), device, window, repeat, warm_s=WARM_S[kind])
    got = (time.process_time() - cpu) / ((time.perf_counter() - wall) * figures.get("threads", 1))
    for name, dtype_rates in zip(pairs, rates):
        if not device.startswith("cuda"):  # the CPU time the threads got: < 1 = contended
            figures[f"{name}_cpu_share"] = round(got, 2)
        figures.update(summarize_rates(name, [r / 1e12 for r in dtype_rates]))
    return figures


def summarize_rates(name: str, rates: Sequence[float]) -> Dict[str, Any]:
    """The figures of one dtype's repeats (TFLOP/s): median, min, max, spread and count.

    The spread is (max - min) / median of the unrounded rates: recomputed from the rounded
    figures it can be far off at CPU rates of a few hundredths of a TFLOP/s.
    """
    median = statistics.median(rates)
    return {
        f"{name}_tflops": round(median, 3),
        f"{name}_tflops_min": round(min(rates), 3),
        f"{name}_tflops_max": round(max(rates), 3),
        f"{name}_spread": round((max(rates) - min(rates)) / median, 3) if median else 0.0,
        f"{name}_repeats": len(rates),
    }


def matmul_repeats(
    a: Any, b: Any, device: str, seconds: float, repeat_s: float = 0.1, min_repeats: int = 5
) -> List[float]:
    """FLOP/s of ``a @ b`` in repeats of about ``repeat_s`` each, for at least ``seconds``
    (``interleaved_repeats`` of one pair)."""
    (rates,) = interleaved_repeats([(a, b)], device, seconds, repeat_s, min_repeats)
    return rates


def interleaved_repeats(
    pairs: Sequence[Tuple[Any, Any]],
    device: str,
    seconds: float,
    repeat_s: float = 0.1,
    min_repeats: int = 5,
    warm_s: Optional[float] = None,
) -> List[List[float]]:
    """FLOP/s of each pair's ``a @ b``, in repeats of about ``repeat_s`` each, at least
    ``min_repeats`` of them and ``seconds`` of repeats per pair.

    Each pair is warmed up first (``_per_repeat``, until a batch takes ``warm_s``, by
    default a repeat); then the repeats go round the pairs,
    one of each in turn. So each pair's repeats spread over the whole window of all of
    them, and a slow spell of the machine (another process holding a core for a few hundred
    ms) falls on every pair alike and on a small part of each, where windows one after the
    other would hand it whole to one pair's figure: at the same cost, the figures move less
    from run to run (benchmarks/bench_smoke.py).
    """
    pers = [_per_repeat(a, b, device, repeat_s, warm_s or repeat_s) for a, b in pairs]
    rates: List[List[float]] = [[] for _ in pairs]
    window = time.perf_counter()
    while min(map(len, rates)) < min_repeats or time.perf_counter() - window < seconds * len(pairs):
        for (a, b), per, out in zip(pairs, pers, rates):
            start = time.perf_counter()
            for _ in range(per):
                a @ b
            _sync(device)
            out.append(2 * a.shape[0] ** 3 * per / (time.perf_counter() - start))
    return rates


def _per_repeat(a: Any, b: Any, device: str, repeat_s: float, warm_s: float) -> int:
    """How many matmuls make a repeat of about ``repeat_s``, from a warm-up until a batch
    takes ``warm_s`` (allocator, kernel selection, thread pool start, the clock leaving
    idle): long enough for the timer and the GPU queue, short enough that a window holds
    several."""
    a @ b
    _sync(device)
    per, start = 1, time.perf_counter()
    while True:  # warm-up: doubling batches until one takes warm_s
        for _ in range(per):
            a @ b
        _sync(device)
        took = time.perf_counter() - start
        if took >= warm_s or per >= 1 << 16:
            break
        per, start = per * 2, time.perf_counter()
    return max(1, round(per * repeat_s / max(took, 1e-9)))


def time_matmul(a: Any, b: Any, device: str, seconds: float) -> float:
    """The median FLOP/s of ``a @ b`` over a window of about ``seconds`` (matmul_repeats)."""
    return statistics.median(matmul_repeats(a, b, device, seconds))


def amp(device: str, steps: int = 30) -> Dict[str, Any]:
    """A tiny model trained a few steps under autocast, like a first training step.

    CUDA uses fp16 with a GradScaler (bf16 too where supported); the CPU uses bf16.
    Passes when every loss is finite, the loss goes down, and the scaler did not
    skip every step.
    """
    import torch

    figures: Dict[str, Any] = {}
    kinds: List[Tuple[str, bool]] = []
    if device.startswith("cuda"):
        kinds.append(("float16", True))
        if torch.cuda.is_bf16_supported():
            kinds.append(("bfloat16", False))
    else:
        kinds.append(("bfloat16", False))
    for dtype_name, scaled in kinds:
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)
        ).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        x = torch.randn(256, 64, device=device)
        y = x[:, :1] * 2.0 + 1.0
        scaler = torch.amp.GradScaler(device.split(":")[0], enabled=scaled)
        losses, skipped = [], 0
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.split(":")[0], dtype=getattr(torch, dtype_name)):
                loss = torch.nn.functional.mse_loss(model(x).float(), y)
            before = scaler.get_scale() if scaled else None
            scaler.scale(loss).backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
            scaler.step(opt)
            scaler.update()
            if scaled and before is not None and scaler.get_scale() < before:
                skipped += 1
            losses.append(float(loss.detach()))
        verify_training(dtype_name, losses, skipped, steps)
        figures[dtype_name] = {
            "first_loss": round(losses[0], 5),
            "last_loss": round(losses[-1], 5),
            "skipped_steps": skipped,
        }
    return figures


def verify_training(name: str, losses: List[float], skipped: int, steps: int) -> None:
    import math

    if not all(math.isfinite(v) for v in losses):
        raise SmokeFailure(f"{name} AMP: the loss became {losses[-1]} (not finite)")
    if not losses[-1] < losses[0]:
        raise SmokeFailure(
            f"{name} AMP: the loss did not decrease ({losses[0]:.4g} -> {losses[-1]:.4g})"
        )
    if skipped >= steps:
        raise SmokeFailure(f"{name} AMP: the GradScaler skipped every step (inf/NaN gradients)")


KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
# The sweep, in bytes of float32: x4 from 4 KiB (latency-bound) up to where the link's
# bandwidth shows. 64 MiB saturates loopback TCP for gloo; NVLink needs far more.
CPU_SWEEP = tuple(4 * KIB * 4**i for i in range(8))  # 4 KiB .. 64 MiB
GPU_SWEEP = tuple(4 * KIB * 4**i for i in range(10))  # 4 KiB .. 1 GiB
# The time each size is given, by device. Over gloo every byte crosses loopback TCP in the
# kernel, on both ranks: the sweep's CPU time is the bytes it moves and the latency-bound
# small sizes' iterations. 0.025 s gives the largest sizes the 2 timed iterations every
# size gets after its verified warm-up, and the small ones a dozen to 20; a GPU's 0.25 s
# costs the host little.
SIZE_S = {"cuda": 0.25, "cpu": 0.025}


def all_reduce(
    device: str,
    sizes: Optional[Sequence[int]] = None,
    iters: Optional[int] = None,
    seconds_per_size: Optional[float] = None,
    budget_s: float = 20.0,
) -> Dict[str, Any]:
    """SUM all_reduce over the initialised process group: a size sweep, verified exactly.

    ``sizes`` overrides the sweep (counts of float32 elements); the default goes by x4
    from 4 KiB to 64 MiB on the CPU (gloo) and to 1 GiB on GPUs (NCCL). Per size: one
    verified warm-up, then ``iters`` timed iterations (default: as many as fit in
    ``seconds_per_size``, by default the device's ``SIZE_S``, 2 to 20, judged from the
    warm-up), averaged as nccl-tests do.
    The ranks agree on the count (MIN over ranks), so none waits in an all_reduce the
    others skipped; the sweep stops early, on every rank alike, once ``budget_s`` has
    passed, so a slow link reports what it measured instead of taking minutes
    (``truncated`` says so). On a GPU the sweep stops at a quarter of the free memory of
    the fullest GPU (agreed over the ranks), so a small or busy GPU is not failed by an
    out-of-memory error that says nothing about its links.

    algbw = bytes / time; busbw = algbw * 2(n-1)/n: the ring all_reduce moves 2(n-1)/n
    of the buffer over each rank's link, so busbw compares with the link's bandwidth
    whatever n is (nccl-tests, doc/PERFORMANCE.md, "Bus bandwidth": "For AllReduce,
    busBw = algBw * 2(n-1)/n").
    """
    import torch.distributed as dist

    rank, world = dist.get_rank(), dist.get_world_size()
    expected = world * (world + 1) / 2  # each rank contributes rank + 1
    counts = _sweep(device, sizes)
    per_size = seconds_per_size or SIZE_S[_kind(device)]
    results = []
    truncated = False
    began = time.perf_counter()

    def over_budget() -> bool:
        return time.perf_counter() - began > budget_s

    for numel in counts:
        figures, go_on = _all_reduce_size(
            device, numel, float(rank + 1), expected, iters, per_size, over_budget
        )
        results.append(figures)
        if not go_on and numel != counts[-1]:
            truncated = True
            break
    out: Dict[str, Any] = {"world_size": world, "backend": dist.get_backend(), "sizes": results}
    if truncated:
        out["truncated"] = f"stopped after {budget_s:g} s (the time budget of the sweep)"
    peak = max(results, key=lambda r: r["busbw_gbps"])
    out["peak_busbw_gbps"], out["peak_bytes"] = peak["busbw_gbps"], peak["bytes"]
    return out


def _sweep(device: str, sizes: Optional[Sequence[int]]) -> List[int]:
    """The counts of float32 elements to all_reduce: ``sizes``, or the device's default sweep;
    on a GPU only those up to a quarter of the free memory of the fullest GPU (MIN over the
    ranks, so every rank sweeps the same sizes)."""
    import torch
    import torch.distributed as dist

    if sizes is None:
        sweep = GPU_SWEEP if device.startswith("cuda") else CPU_SWEEP
        counts = [b // 4 for b in sweep]
    else:
        counts = [int(n) for n in sizes]
    if device.startswith("cuda"):  # a small or busy GPU: sizes up to a quarter of free memory
        free = int(torch.cuda.mem_get_info(device)[0])
        free_t = torch.tensor([float(free)], device=device)
        dist.all_reduce(free_t, op=dist.ReduceOp.MIN)  # the same sweep on every rank
        counts = [n for n in counts if n * 4 <= free_t.item() / 4] or counts[:1]
    return counts


def _all_reduce_size(
    device: str,
    numel: int,
    contribution: float,
    expected: float,
    iters: Optional[int],
    seconds_per_size: float,
    over_budget: Callable[[], bool],
) -> Tuple[Dict[str, Any], bool]:
    """One size of the sweep: a verified warm-up, then the timed iterations. Returns its
    figures, and whether the sweep goes on after it (not once ``over_budget()`` says the
    sweep's time is spent, after the warm-up, on any rank: MIN over the ranks, so all
    ranks agree)."""
    import torch
    import torch.distributed as dist

    world = dist.get_world_size()
    tensor = torch.full((numel,), contribution, dtype=torch.float32, device=device)
    _sync(device)
    dist.barrier()
    start = time.perf_counter()
    dist.all_reduce(tensor)
    _sync(device)
    warm = time.perf_counter() - start
    verify_all_reduce(tensor, expected, numel)
    wanted = iters or min(20, max(2, int(seconds_per_size / max(warm, 1e-6))))
    over = over_budget()
    # [iterations, go on after this size]: MIN over ranks, so all ranks agree
    plan = torch.tensor([float(wanted), 0.0 if over else 1.0], device=device)
    dist.all_reduce(plan, op=dist.ReduceOp.MIN)
    count, go_on = int(plan[0].item()), bool(plan[1].item())
    dist.barrier()
    start = time.perf_counter()
    for _ in range(count):
        dist.all_reduce(tensor)
    _sync(device)
    elapsed = (time.perf_counter() - start) / count
    algbw = numel * 4 / elapsed / 1e9
    figures = {
        "bytes": numel * 4,
        "iters": count,
        "time_us": round(elapsed * 1e6, 1),
        "algbw_gbps": round(algbw, 3),
        "busbw_gbps": round(algbw * 2 * (world - 1) / world, 3),
    }
    del tensor
    return figures, go_on


def verify_all_reduce(tensor: Any, expected: float, numel: int) -> None:
    wrong = (tensor != expected).sum().item()
    if wrong:
        got = tensor[(tensor != expected)].flatten()[0].item()
        raise SmokeFailure(
            f"all_reduce of {numel} floats: {wrong} elements wrong (expected {expected:g}, got {got:g})"
        )


def memory(device: str, fraction: float = 0.5) -> Dict[str, Any]:
    """Write a pattern over part of free device memory and read it back."""
    import torch

    if device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(device)
    else:
        import psutil

        free = psutil.virtual_memory().available
    numel = int(free * fraction) // 4
    numel = min(numel, 256 * 1024**2 if not device.startswith("cuda") else numel)
    block = torch.arange(numel, dtype=torch.int32, device=device)
    ok = bool((block == torch.arange(numel, dtype=torch.int32, device=device)).all().item())
    if not ok:
        raise SmokeFailure(f"memory: the pattern written over {numel * 4} bytes did not read back")
    return {"bytes": numel * 4}


def compiled(device: str) -> Dict[str, Any]:
    """torch.compile a tiny function and compare it with eager."""
    import torch

    def fn(x: Any) -> Any:
        return torch.nn.functional.gelu(x @ x.T) * 2 + x.sum()

    x = torch.randn(64, 64, device=device)
    start = time.perf_counter()
    out = torch.compile(fn)(x)
    elapsed = time.perf_counter() - start
    check_close("torch.compile", out.cpu(), fn(x).double().cpu(), 1e-4)
    return {"compile_s": round(elapsed, 2)}


def tiny_matmul(device: str) -> Dict[str, Any]:
    """The healthcheck's --deep probe: a small matmul checked against float64, untimed."""
    import torch

    gen = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, dtype=torch.float64, generator=gen)
    err = check_close(
        "matmul", (a.to(device, torch.float32) @ a.to(device, torch.float32)).cpu(), a @ a, 1e-4
    )
    return {"rel_error": err}
