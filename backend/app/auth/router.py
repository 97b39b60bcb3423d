"""HTTP endpoints of sign-in, sign-out and the current user."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response, status

from app.api.deps import CurrentSession, CurrentUser, SessionDep
from app.auth import service
from app.auth.cookies import CSRF_COOKIE, SESSION_COOKIE
from app.auth.schemas import LoginRequest
from app.core.config import get_settings
from app.users.schemas import UserRead

router = APIRouter(prefix="/auth", tags=["auth"])


def _client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _secure_cookies(request: Request) -> bool:
    """Secure cookies over HTTPS (also behind a TLS-terminating proxy) and in production."""
    forwarded = request.headers.get("x-forwarded-proto", "")
    return request.url.scheme == "https" or forwarded == "https" or get_settings().is_production


def _set_session_cookies(response: Response, request: Request, created: service.NewSession) -> None:
    secure = _secure_cookies(request)
    response.set_cookie(
        SESSION_COOKIE,
        created.session_id,
        max_age=created.max_age_s,
        path="/",
        httponly=True,
        samesite="lax",
        secure=secure,
    )
    # Readable by the UI's JavaScript, which echoes it in X-CSRF-Token.
    response.set_cookie(
        CSRF_COOKIE,
        created.csrf_token,
        max_age=created.max_age_s,
        path="/",
        httponly=False,
        samesite="lax",
        secure=secure,
    )


@router.post(
    "/login",
    response_model=UserRead,
    responses={
        401: {"description": "invalid username or password"},
        429: {"description": "too many failed attempts"},
    },
)
def login(
    body: LoginRequest, request: Request, response: Response, session: SessionDep
) -> UserRead:
    """Sign in: sets the nf_session and nf_csrf cookies."""
    try:
        created = service.login(
            session=session,
            username=body.username,
            password=body.password,
            ip=_client_ip(request),
            user_agent=request.headers.get("user-agent"),
        )
    except service.TooManyAttemptsError as exc:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many failed sign-ins; wait a few minutes and try again",
            headers={"Retry-After": str(int(service.FAILURE_WINDOW.total_seconds()))},
        ) from exc
    except service.InvalidCredentialsError as exc:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "invalid username or password") from exc
    _set_session_cookies(response, request, created)
    return UserRead.model_validate(created.user)


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(user_session: CurrentSession, request: Request, session: SessionDep) -> Response:
    """Sign out: ends the session and clears the cookies."""
    service.logout(session=session, user_session=user_session)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    secure = _secure_cookies(request)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=secure)
    response.delete_cookie(CSRF_COOKIE, path="/", samesite="lax", secure=secure)
    return response


@router.get("/me", response_model=UserRead)
def me(user: CurrentUser) -> UserRead:
    """The signed-in user."""
    return UserRead.model_validate(user)
