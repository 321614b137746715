export { auditExportFeature } from "./feature";
export { type ExportLogsServiceRequest, exportRequestOf, logRecordOf } from "./otlp";
export { parseOtlpHeaders } from "./settings";
