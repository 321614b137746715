export declare function featureFolders(): string[];
export declare function tableFiles(): string[];
