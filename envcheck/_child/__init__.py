"""Scripts that envcheck runs as child processes, by path.

Each one imports only the standard library before its real work, so that it
measures the target interpreter and not envcheck, and can run in an environment
where envcheck itself is not installed. This folder holds nothing else: it is
the child's ``sys.path[0]``, and no module here may shadow one the child imports.
"""
