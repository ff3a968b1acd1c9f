"""npu-smi's health words and what they mean for scheduling (see ascend-facts A.3)."""

from npu_dra.domain.device import Health

HEALTH_WORDS: dict[str, Health] = {
    "OK": Health.HEALTHY,
    "Warning": Health.DEGRADED,
    "Alarm": Health.UNHEALTHY,
    "Critical": Health.CRITICAL,
    "UNKNOWN": Health.UNKNOWN,
}


def health_of(word: str) -> Health | None:
    """The domain health of an npu-smi word, or None if the word is not one npu-smi prints."""
    return HEALTH_WORDS.get(word)
