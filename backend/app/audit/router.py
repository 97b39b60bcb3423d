"""HTTP endpoint of the audit log (admin)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import AdminUser, SessionDep
from app.audit import service
from app.audit.schemas import AuditEntryRead

router = APIRouter(prefix="/audit", tags=["audit"])


@router.get("", response_model=list[AuditEntryRead])
def list_audit(
    _admin: AdminUser, session: SessionDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[AuditEntryRead]:
    """The newest audit entries first."""
    entries = service.list_entries(session=session, limit=limit)
    return [AuditEntryRead.model_validate(entry) for entry in entries]
