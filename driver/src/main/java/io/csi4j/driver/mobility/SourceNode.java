package io.csi4j.driver.mobility;

/**
 * The node that holds a copy's content source, as the receiving node reaches it (the cluster's agent link implements
 * it). A failure of the link or of the source node leaves {@link #read} or {@link Transfer#next} as the implementing
 * edge's own answer (the source node's code and message, silence as unavailable); the domain rolls back what it
 * began and passes it on unchanged.
 */
public interface SourceNode {

    /** The source node's id, as messages name it. */
    String nodeId();

    /** Starts sending {@code query}'s source; the caller closes the transfer when done with it, read to the end or not. */
    Transfer read(SourceQuery query);

    /** The parts of one copy as they arrive. */
    interface Transfer extends AutoCloseable {
        /** The next part, waiting for it; null once the source ended the stream. */
        SourcePart next();

        /** Stops the sending side if it still sends; nothing more is read. */
        @Override
        void close();
    }
}
