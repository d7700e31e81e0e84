// The throwaway redis-server the tests, the benchmarks and examples/cluster share.
export * from "../../examples/shared/redis-server.js";
