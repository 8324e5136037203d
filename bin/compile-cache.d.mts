// Types of ./compile-cache.mjs (plain JavaScript: it runs before anything can compile TypeScript).
export function sourceFiles(root: string): string[];
export function cacheKey(root: string, files: readonly string[], compilerVersion: string): string;
export function retarget(code: string): string;
export function compiledEntry(root: string, env?: NodeJS.ProcessEnv): string | undefined;
