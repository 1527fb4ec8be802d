package io.csi4j.driver.engine;

/**
 * A private reflink of a volume's own image, taken under the volume's lock while no loop device used it
 * ({@link DataMover#stillImage}): read to hash its chunks, then reflinked as the base of the image built beside it.
 * Nothing else opens it, so what was hashed is exactly what the build starts from, whatever happens to the volume's
 * image meanwhile (the commit's rename refuses an image in use). Closing removes it; a crash leaves it in the pool's
 * temporary directory, swept at start-up.
 */
public non-sealed interface StillImage extends SourceImage, ImportBase {}
