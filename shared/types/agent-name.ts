// Agent names, as a plain pattern: the token store checks them without loading zod, so a CLI
// command that only reads the user's token stays light (api.ts builds the schema from it).

/** Agent names: they become ledger actors and labels. */
export const AGENT_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;
