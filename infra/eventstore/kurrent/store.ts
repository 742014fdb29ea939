import type { Logger } from '../../logger.js';
import type { EventStore } from '../types.js';

/** Placeholder until the KurrentDB adapter lands: selecting it fails loudly at start. */
export const KurrentEventStore = {
  async connect(_url: string, _log: Logger): Promise<EventStore> {
    throw new Error('EVENTSTORE_URL: the KurrentDB adapter is not available in this build');
  },
};
