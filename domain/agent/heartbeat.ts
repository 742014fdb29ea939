/**
 * Seconds between an agent's WebSocket heartbeats (the agent's default; its
 * configuration may change it). The server counts a node online up to 75 s after
 * its last heartbeat, so two may be lost; the console reads the interval from
 * `GET /ui/session`.
 */
export const HEARTBEAT_INTERVAL_SECONDS = 30;
