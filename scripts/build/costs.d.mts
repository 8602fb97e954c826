// Types of costs.mjs for the tests that import it (test/budget/cost-table.test.ts).
export declare const COSTS_BEGIN: string;
export declare const COSTS_END: string;
export declare const RUN_SIZES: { name: string; what: string; input: number; cached: number; output: number }[];
export declare function costsSection(): Promise<string>;
export declare function writeCostTables(root: URL): Promise<void>;
