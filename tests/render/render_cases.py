"""Real model objects for the renderer tests: a small flagship-like chain and its context.

A plain module (not conftest) so tests can import the names; conftest wraps them as fixtures.
"""
from __future__ import annotations

from callgraph.model import GraphView, Hop, Node, Proof, Unresolved, Verdict

KIMI = "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward"
ROUTINE = "sglang.srt.managers.mm_utils.general_mm_embed_routine"
CAUSAL = "sglang.srt.models.deepseek_v2.DeepseekV2ForCausalLM.forward"
MODEL = "sglang.srt.models.deepseek_v2.DeepseekV2Model.forward"
VISION = "sglang.srt.models.kimi_k25.MoonVit.forward"
EMBED = "sglang.srt.managers.mm_utils.embed_mm_inputs"
LAYER = "sglang.srt.models.deepseek_v2.DeepseekV2DecoderLayer.forward"

PATH = (
    Hop(KIMI, ROUTINE, "sglang/srt/models/kimi_k25.py:46:15", "general_mm_embed_routine(...)",
        "direct"),
    Hop(ROUTINE, CAUSAL, "sglang/srt/managers/mm_utils.py:14:11", "language_model(...)",
        "param-binding"),
    Hop(CAUSAL, MODEL, "sglang/srt/models/deepseek_v2.py:53:24", "self.model(...)",
        "init-attribute"),
)
CONTEXT = (
    Hop(KIMI, VISION, "sglang/srt/models/kimi_k25.py:44:17", "self.vision_tower(...)",
        "module-call"),
    Hop(ROUTINE, EMBED, "sglang/srt/managers/mm_utils.py:12:8", "embed_mm_inputs(...)", "direct"),
    Hop(MODEL, LAYER, "sglang/srt/models/deepseek_v2.py:40:20", "layer(...)", "container"),
)
NODES = {
    KIMI: Node(KIMI, "sglang/srt/models/kimi_k25.py", 40),
    ROUTINE: Node(ROUTINE, "sglang/srt/managers/mm_utils.py", 5),
    CAUSAL: Node(CAUSAL, "sglang/srt/models/deepseek_v2.py", 50),
    MODEL: Node(MODEL, "sglang/srt/models/deepseek_v2.py", 35),
    VISION: Node(VISION, "sglang/srt/models/kimi_k25.py", 20),
    EMBED: Node(EMBED, "sglang/srt/managers/mm_utils.py", 2),
    LAYER: Node(LAYER, "sglang/srt/models/deepseek_v2.py", 20),
}
ROOT = ("fixtures/trees/sglang_mini/python",)

