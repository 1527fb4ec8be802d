package io.csi4j.driver.volume;

/** How a volume may be used, as CSI names it. This driver's volumes live on one node. */
public enum AccessMode {
    SINGLE_NODE_WRITER,
    SINGLE_NODE_READER_ONLY,
    MULTI_NODE_READER_ONLY,
    MULTI_NODE_SINGLE_WRITER,
    MULTI_NODE_MULTI_WRITER,
    SINGLE_NODE_SINGLE_WRITER,
    SINGLE_NODE_MULTI_WRITER;

    public boolean multiNode() {
        return name().startsWith("MULTI_NODE");
    }

    public boolean readOnly() {
        return this == SINGLE_NODE_READER_ONLY || this == MULTI_NODE_READER_ONLY;
    }
}
