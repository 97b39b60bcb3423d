"""FastAPI dependencies shared by every router: database session, current user, roles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from sqlalchemy.orm import Session

from app.auth import service as auth_service
from app.auth.cookies import CSRF_HEADER, SESSION_COOKIE
from app.auth.models import UserSession
from app.core.db import get_session
from app.core.openapi import raises
from app.core.security import tokens_equal
from app.users.models import Role, User

SessionDep = Annotated[Session, Depends(get_session)]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@raises(401, 403)
def get_user_session(request: Request, session: SessionDep) -> UserSession:
    """The signed-in session of this request; 401 without one, 403 on a CSRF mismatch."""
    raw_id = request.cookies.get(SESSION_COOKIE)
    if not raw_id:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "not signed in")
    user_session = auth_service.resolve_session(session=session, session_id=raw_id)
    if user_session is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "session expired, please sign in again")
    if request.method in UNSAFE_METHODS:
        # The middleware compared cookie and header; binding the header to this session also
        # defeats a CSRF cookie planted by a sibling subdomain.
        sent = request.headers.get(CSRF_HEADER, "")
        if not tokens_equal(sent, user_session.csrf_token):
            raise HTTPException(status.HTTP_403_FORBIDDEN, "CSRF token missing or wrong")
    return user_session


CurrentSession = Annotated[UserSession, Depends(get_user_session)]


def get_current_user(user_session: CurrentSession) -> User:
    """The signed-in user."""
    return user_session.user


CurrentUser = Annotated[User, Depends(get_current_user)]


def require_role(required: Role) -> Callable[[User], User]:
    """A dependency that lets through users with at least the required role (else 403)."""

    @raises(403)
    def check_role(user: CurrentUser) -> User:
        if not user.role.allows(required):
            raise HTTPException(
                status.HTTP_403_FORBIDDEN, f"this needs the {required.value} role or higher"
            )
        return user

    return check_role


ViewerUser = Annotated[User, Depends(require_role(Role.viewer))]
OperatorUser = Annotated[User, Depends(require_role(Role.operator))]
AdminUser = Annotated[User, Depends(require_role(Role.admin))]
