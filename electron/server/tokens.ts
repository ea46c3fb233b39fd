// Agent tokens, stored 0600 in WARDEN_HOME.
export class TokenStore {}
