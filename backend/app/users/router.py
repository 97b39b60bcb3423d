"""HTTP endpoints of user administration (admin)."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api.deps import AdminUser, SessionDep
from app.core.types import IdPath
from app.users import service
from app.users.schemas import UserCreate, UserRead, UserUpdate

router = APIRouter(prefix="/users", tags=["users"])


@router.get("", response_model=list[UserRead])
def list_users(_admin: AdminUser, session: SessionDep) -> list[UserRead]:
    """Every user."""
    return [UserRead.model_validate(user) for user in service.list_users(session=session)]


@router.post("", response_model=UserRead, status_code=status.HTTP_201_CREATED)
def create_user(body: UserCreate, admin: AdminUser, session: SessionDep) -> UserRead:
    """Create a user (409 if the username is taken)."""
    user = service.create_user(
        session=session,
        actor=admin,
        username=body.username,
        password=body.password,
        role=body.role,
    )
    return UserRead.model_validate(user)


@router.patch("/{user_id}", response_model=UserRead)
def update_user(
    user_id: IdPath, body: UserUpdate, admin: AdminUser, session: SessionDep
) -> UserRead:
    """Change a user's role, password or disabled flag."""
    user = service.update_user(
        session=session,
        actor=admin,
        user_id=user_id,
        role=body.role,
        password=body.password,
        disabled=body.disabled,
    )
    return UserRead.model_validate(user)


@router.delete("/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_user(user_id: IdPath, admin: AdminUser, session: SessionDep) -> Response:
    """Delete a user (not yourself, not the last admin)."""
    service.delete_user(session=session, actor=admin, user_id=user_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
