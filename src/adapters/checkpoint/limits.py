"""How large the checkpoint's files may be read, and when the journal is folded into the
snapshot (adapters/checkpoint/files.py)."""

COMPACT_AFTER = 512  # journal lines before they are folded into the snapshot
DRAIN_AFTER_S = 1.0  # a node left without claims is compacted to the drained form this late
# The most bytes of a snapshot read. How many claims a node holds has no API limit (admin-access
# and shared devices can be in many claims), so the limit is sized for 4096 claims of the
# largest record the API allows (32 devices, every name at its longest: 36 kB measured, written
# indented), about 230,000 typical ones (0.7 kB for one device): far beyond any node's pods.
MAX_CLAIM_RECORD_BYTES = 40 << 10
MAX_CHECKPOINT_BYTES = 4096 * MAX_CLAIM_RECORD_BYTES
COMPACT_AFTER_BYTES = 16 << 20  # journal bytes before they are folded into the snapshot
# The journal is folded once it holds COMPACT_AFTER_BYTES, so it holds at most that plus one
# line, and a line at most every claim of a checkpoint (written compactly: smaller than the
# snapshot's indented form).
MAX_JOURNAL_BYTES = COMPACT_AFTER_BYTES + MAX_CHECKPOINT_BYTES
