"""User accounts: creation, changes with the last-admin rule, and the bootstrap admin."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.audit import service as audit
from app.auth import service as auth_service
from app.core.config import MIN_PASSWORD_LENGTH, Settings
from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.core.security import hash_password
from app.users.models import Role, User

log = logging.getLogger(__name__)


def check_password_policy(password: str) -> None:
    """Refuse passwords shorter than the minimum length."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidInputError(f"password must be at least {MIN_PASSWORD_LENGTH} characters")


def list_users(*, session: Session) -> Sequence[User]:
    """Every user, by username."""
    return session.scalars(select(User).order_by(User.username)).all()


def get_user(*, session: Session, user_id: int, for_update: bool = False) -> User:
    """One user (row-locked until commit when for_update), or NotFoundError."""
    query = select(User).where(User.id == user_id)
    user = session.scalar(query.with_for_update() if for_update else query)
    if user is None:
        raise NotFoundError(f"user {user_id} not found")
    return user


def create_user(
    *, session: Session, actor: User | str | None, username: str, password: str, role: Role
) -> User:
    """Create a user with an argon2id password hash; ConflictError if the name is taken."""
    username = username.strip()
    if not username:
        raise InvalidInputError("username must not be empty")
    check_password_policy(password)
    if session.scalar(select(User.id).where(User.username == username)) is not None:
        raise ConflictError(f"user {username!r} already exists")
    user = User(username=username, password_hash=hash_password(password), role=role)
    session.add(user)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent request created the same name first
        session.rollback()
        raise ConflictError(f"user {username!r} already exists") from exc
    audit.record(
        session=session,
        actor=actor,
        action="user.create",
        target=f"user:{user.id}",
        detail={"username": username, "role": role.value},
    )
    session.commit()
    return user


def _other_active_admins(*, session: Session, user_id: int) -> int:
    query = select(func.count(User.id)).where(
        User.role == Role.admin, User.disabled.is_(False), User.id != user_id
    )
    return session.scalar(query) or 0


def _would_remove_last_admin(*, session: Session, user: User) -> bool:
    return (
        user.role == Role.admin
        and not user.disabled
        and _other_active_admins(session=session, user_id=user.id) == 0
    )


def update_user(
    *,
    session: Session,
    actor: User,
    user_id: int,
    role: Role | None = None,
    password: str | None = None,
    disabled: bool | None = None,
) -> User:
    """Change role, password or disabled flag; the last active admin cannot lose admin rights."""
    # Locked so that an edit racing a delete of the same user finds it gone (404), not a 500.
    user = get_user(session=session, user_id=user_id, for_update=True)
    changes: dict[str, object] = {}
    demoted = role is not None and role != Role.admin and user.role == Role.admin
    if (demoted or disabled) and _would_remove_last_admin(session=session, user=user):
        raise ConflictError(f"{user.username} is the last admin; make another admin first")
    if disabled and user.id == actor.id:
        raise ConflictError("you cannot disable your own account")
    if role is not None and role != user.role:
        changes["role"] = {"from": user.role.value, "to": role.value}
        user.role = role
    if disabled is not None and disabled != user.disabled:
        changes["disabled"] = disabled
        user.disabled = disabled
    if password is not None:
        check_password_policy(password)
        user.password_hash = hash_password(password)
        changes["password_changed"] = True
    if changes:
        # New rights or a new password: end the old sessions so they take effect at once.
        if user.id != actor.id or "password_changed" in changes:
            auth_service.end_sessions_of(session=session, user_id=user.id)
        audit.record(
            session=session,
            actor=actor,
            action="user.update",
            target=f"user:{user.id}",
            detail={"username": user.username, **changes},
        )
    session.commit()
    return user


def delete_user(*, session: Session, actor: User, user_id: int) -> None:
    """Delete a user; not yourself, and never the last admin."""
    user = get_user(session=session, user_id=user_id, for_update=True)
    if user.id == actor.id:
        raise ConflictError("you cannot delete your own account")
    if _would_remove_last_admin(session=session, user=user):
        raise ConflictError(f"{user.username} is the last admin; make another admin first")
    audit.record(
        session=session,
        actor=actor,
        action="user.delete",
        target=f"user:{user.id}",
        detail={"username": user.username},
    )
    session.delete(user)
    session.commit()


def bootstrap_admin(*, session: Session, settings: Settings) -> User | None:
    """Create the admin from NGINX_FLEET_ADMIN_* when there is no user at all."""
    if session.scalar(select(func.count(User.id))):
        return None
    if settings.admin_password is not None:
        password = settings.admin_password.get_secret_value()
        generated = False
    else:
        # Development only (production refuses to start without a password): a one-off
        # random password printed once, so a fresh `make run` can be signed in to.
        password = secrets.token_urlsafe(12)
        generated = True
    try:
        user = create_user(
            session=session,
            actor=None,
            username=settings.admin_user,
            password=password,
            role=Role.admin,
        )
    except ConflictError:  # another replica starting at the same moment created it
        return None
    if generated:
        log.warning(
            "created admin user %r with generated password %s "
            "(set NGINX_FLEET_ADMIN_PASSWORD to choose it)",
            user.username,
            password,
        )
    else:
        log.info("created admin user %r from NGINX_FLEET_ADMIN_PASSWORD", user.username)
    return user
