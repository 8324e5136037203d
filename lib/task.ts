// A task as every source gives it: the one data type the run's events and the sources both speak of, so it
// sits below both (lib/sources/types.ts re-exports it).

export interface Task {
  id: string;
  title: string;
  /** Source-specific status word (open, in_progress, closed, pending, completed, …). */
  status: string;
  priority?: number;
  meta?: Record<string, unknown>;
}
