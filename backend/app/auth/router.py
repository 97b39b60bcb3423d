"""HTTP endpoints of sign-in, sign-out and the current user."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response, status

from app.api.client_address import client_address
from app.api.deps import CurrentSession, CurrentUser, SessionDep
from app.auth import service
from app.auth.cookies import CSRF_COOKIE, SESSION_COOKIE
from app.auth.password_checks import BUSY_RETRY_AFTER_S, PasswordChecksBusyError
from app.auth.schemas import LoginRequest
from app.core.config import get_settings
from app.users.schemas import UserRead

router = APIRouter(prefix="/auth", tags=["auth"])


def _secure_cookies(request: Request) -> bool:
    """Secure cookies over HTTPS (a trusted proxy's X-Forwarded-Proto counts) and in production."""
    return request.url.scheme == "https" or get_settings().is_production


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
        503: {"description": "too many sign-ins at once"},
    },
)
async def login(body: LoginRequest, request: Request, response: Response) -> UserRead:
    """Sign in: sets the nf_session and nf_csrf cookies."""
    try:
        created = await service.login(
            username=body.username,
            password=body.password,
            address=client_address(request),
            user_agent=request.headers.get("user-agent"),
        )
    except service.TooManyAttemptsError as exc:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many failed sign-ins; wait a few minutes and try again",
            headers={"Retry-After": str(exc.retry_after_s)},
        ) from exc
    except PasswordChecksBusyError as exc:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "too many sign-ins at once; try again in a moment",
            headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
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
