"""The shape every host label must have, shared by enrolment, push and the label editor."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# Keys cannot hold ':' because the fleet filter is written `label=key:value`.
LABEL_KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-/]*$"
# Values are shown in the UI and typed into filters: printable ASCII without control characters.
LABEL_VALUE_PATTERN = r"^[A-Za-z0-9_.\-/:@+= ]*$"
MAX_LABEL_KEY_LENGTH = 63
MAX_LABEL_VALUE_LENGTH = 128
MAX_LABELS = 32

LabelKey = Annotated[
    str,
    Field(strict=True, min_length=1, max_length=MAX_LABEL_KEY_LENGTH, pattern=LABEL_KEY_PATTERN),
]
LabelValue = Annotated[
    str, Field(strict=True, max_length=MAX_LABEL_VALUE_LENGTH, pattern=LABEL_VALUE_PATTERN)
]
Labels = Annotated[dict[LabelKey, LabelValue], Field(max_length=MAX_LABELS)]
