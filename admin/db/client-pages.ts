/**
 * Pages a business module brings whose view the front end may not have (Keelson's `web/` files
 * must be copied into the Soybean client for them). A stock client shows such a menu as its raw
 * i18n key, a dead entry and console errors, and its role dialog cannot show it, so a save from
 * it would drop the grant. A page declared absent is therefore never delivered as a route nor
 * offered for granting, and grants on it outlive any role-menu save.
 */
export class ClientPages {
  private readonly absent = new Set<string>();

  /** A module's page (by route name) the front end has no view for. */
  markAbsent(routeName: string): void {
    this.absent.add(routeName);
  }

  /** Route names never delivered nor offered (a parameter for `route_name <> ALL($n)`). */
  absentRouteNames(): string[] {
    return [...this.absent];
  }
}
