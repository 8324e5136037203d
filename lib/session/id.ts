// Session ids: when a run started, to the millisecond, plus a tag. Each run's logs, session record and
// reports are named by it, so two runs must never share one, even when started in the same second.
import { randomInt } from 'node:crypto';
import dayjs from 'dayjs';

const TAG_CHARS = 6;
const TAG_RANGE = 36 ** TAG_CHARS;
// A random start, then one step per id: ids of one process never repeat, and two processes (two repos, a
// rerun in the same millisecond) collide only if their tags meet by chance, about once in two billion.
let next = randomInt(TAG_RANGE);

/**
 * A new id `YYYYMMDD-HHmmss-SSS-xxxxxx` (local time, then a base-36 tag). Names sort by start time, older
 * `YYYYMMDD-HHmmss` ids included. Not from `deps.random`: a test's fixed random would defeat the tag.
 */
export function newSessionId(now: number): string {
  const tag = next.toString(36).padStart(TAG_CHARS, '0');
  next = (next + 1) % TAG_RANGE;
  return `${dayjs(now).format('YYYYMMDD-HHmmss-SSS')}-${tag}`;
}
