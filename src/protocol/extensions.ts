/** The tasks extension's identifier, negotiated in `capabilities.extensions` (PROTOCOL §6). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
