"""Published facts per Ascend chip model (ascend-facts E), used where a probe cannot read them."""

import attrs


@attrs.frozen
class ChipFacts:
    memory_mib: int
    aicores: int | None


CHIPS: dict[str, ChipFacts] = {
    "910B1": ChipFacts(65536, 24),
    "910B2": ChipFacts(65536, 24),
    "910B2C": ChipFacts(65536, 24),
    "910B3": ChipFacts(65536, 20),
    "910B4": ChipFacts(32768, 20),
    "910B4-1": ChipFacts(65536, 20),
    "910A": ChipFacts(32768, 30),
    "910ProA": ChipFacts(32768, 32),
    "910ProB": ChipFacts(32768, 30),
    "Ascend910": ChipFacts(65536, 24),
    "310P3": ChipFacts(24576, 8),
    "310B4": ChipFacts(4096, None),
    "950PR": ChipFacts(131072, None),
}
