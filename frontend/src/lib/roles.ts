/** Role ordering: viewer < operator < admin. */
import type { Role } from "../api/types";

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export const ROLES: readonly Role[] = ["viewer", "operator", "admin"];

/** Whether a user's role is at least the required one. */
export function hasRole(role: Role | undefined, required: Role): boolean {
  return role !== undefined && RANK[role] >= RANK[required];
}
