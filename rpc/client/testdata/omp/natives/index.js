// Stand-in for the native addon, whose platform packages the registry lacks:
// the names exist so that modules importing them load; using one throws.
const missing = name => () => { throw new Error(`@oh-my-pi/pi-natives ${name} is not available in this test`); };
export class FileLock { constructor() { missing("FileLock")(); } }
export class Process { static fromPid() { missing("Process")(); } }
export const ProcessStatus = {};
export const renderMermaidAscii = missing("renderMermaidAscii");
