// The gateway: every agent call passes here between a door and the engine.
export class Gateway {}
