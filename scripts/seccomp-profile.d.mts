// Types of scripts/seccomp-profile.mjs, for the spec that checks the committed profile against its lists.
export declare const REFUSED: string[];
export declare const NOT_IMPLEMENTED: string[];
export declare const CLONE_NAMESPACE_FLAGS: number;
export declare function wardenProfile(podmanDefault: { syscalls: Array<{ names?: string[] }> }): unknown;
