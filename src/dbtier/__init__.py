"""dbtier: where should this database live, and what will that cost?"""

__version__ = "0.1.0"
