"""A claim's device metadata (KEP-5304) beside its CDI spec: wherever the preparer writes or
repairs a claim's spec, the claim's metadata files are written first (domain/device_metadata.py:
the same facts as its status.devices) and the spec mounts their directory; where the spec goes,
they go. Without a store (the simulation, the in-memory state) specs are left as they are."""

import logging
from collections.abc import Iterable

from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.checkpoint import PreparedClaim
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.device_facts import claim_facts
from npu_dra.domain.device_metadata import metadata_files, with_metadata
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID, DriverName
from npu_dra.domain.ports import MetadataFiles

log = logging.getLogger(__name__)


class ClaimMetadata:
    def __init__(self, files: MetadataFiles | None, driver: DriverName) -> None:
        self._files, self._driver = files, driver

    def attach(self, claim: PreparedClaim, spec: CdiSpec, inventory: NodeInventory) -> CdiSpec:
        """Write the claim's files and return `spec` mounting them (DomainError if they could
        not be written: the prepare fails, as it would had its spec not been written)."""
        if self._files is None:
            return spec
        facts = claim_facts(claim, inventory, self._driver)
        documents = metadata_files(claim, facts, self._driver)
        directory = self._files.write_metadata(uid=claim.ref.uid, files=documents)
        return with_metadata(spec, claim, directory)

    def remove(self, uid: ClaimUID) -> None:
        if self._files is not None:
            self._files.remove_metadata(uid=uid)

    def discard(self, uids: Iterable[ClaimUID]) -> None:
        """Remove the files of claims whose prepare is undone; a failure is logged, not raised."""
        for uid in uids:
            try:
                self.remove(uid)
            except DomainError as error:
                log.warning("cannot remove the metadata of claim %s: %s", uid, error)
